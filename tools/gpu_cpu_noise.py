#!/usr/bin/python3
"""How far PyTorch's own GPU gradients sit from its CPU gradients on the workloads of classwise's two PreAct
ResNet-18 parity tests (tests/test_cuda_parity.cpp): one SGD training step in train mode (batch 16) and one PGD
input gradient in eval mode (batch 8), fp32 with TF32 off. The same measure as the tests' require_near: an element
is off when |gpu - cpu| > tol * (|cpu| + max|cpu|); the script prints, per tensor, the smallest tol that passes.
Run it on a GPU machine beside the parity tests: it says whether a tolerance failure there is the framework-
independent rounding of cuDNN's algorithms or a classwise defect.

    python3 tools/gpu_cpu_noise.py [--deterministic] [--no-benchmark]
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_models import PreActResNet18  # noqa: E402


def needed_tol(got, want):
    """The smallest tol with |got - want| <= tol * (|want| + max|want|) everywhere."""
    want, got = want.double().flatten(), got.double().flatten().cpu()
    return float(((got - want).abs() / (want.abs() + want.abs().max())).max())


def rel_l2(got, want):
    want, got = want.double().flatten(), got.double().flatten().cpu()
    return float((got - want).norm() / want.norm().clamp_min(1e-30))


def train_step(model, x, y):
    model.train()
    model.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    return [p.grad.detach().clone() for p in model.parameters()]


def input_grad(model, x, y):
    model.eval()
    xa = x.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(F.cross_entropy(model(xa), y), xa)
    return g


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--deterministic", action="store_true")
    p.add_argument("--no-benchmark", action="store_true")
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("gpu_cpu_noise: no GPU")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = not a.no_benchmark
    torch.backends.cudnn.deterministic = a.deterministic
    torch.manual_seed(5)
    cpu_model = PreActResNet18(num_classes=10)
    gpu_model = PreActResNet18(num_classes=10).cuda()
    gpu_model.load_state_dict(cpu_model.state_dict())
    x = torch.rand(16, 3, 32, 32)
    y = torch.arange(16) % 10
    gc = train_step(cpu_model, x, y)
    gg = train_step(gpu_model, x.cuda(), y.cuda())
    tols = [needed_tol(g, c) for g, c in zip(gg, gc)]
    names = [n for n, _ in cpu_model.named_parameters()]
    worst = max(range(len(tols)), key=lambda i: tols[i])
    l2 = [rel_l2(g, c) for g, c in zip(gg, gc)]
    worst_l2 = max(range(len(l2)), key=lambda i: l2[i])
    mode = ("deterministic" if a.deterministic else "default") + (", no benchmark" if a.no_benchmark else ", benchmark")
    print(f"PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, TF32 off, {mode}")
    print(f"train step (batch 16): parameter gradients need tol up to {tols[worst]:.2e} ({names[worst]}); "
          f"conv1.weight {tols[0]:.2e}; over 1e-3: {sum(t > 1e-3 for t in tols)} of {len(tols)} tensors")
    print(f"train step: relative L2 distance of parameter gradients up to {l2[worst_l2]:.2e} ({names[worst_l2]})")
    xe = torch.rand(8, 3, 32, 32)
    ye = torch.arange(8) % 10
    print(f"PGD input gradient (batch 8, eval): needs tol {needed_tol(input_grad(gpu_model, xe.cuda(), ye.cuda()), input_grad(cpu_model, xe, ye)):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
