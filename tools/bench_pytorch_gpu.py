#!/usr/bin/python3
"""PyTorch eager twin of bench/bench_cuda.cpp, for the classwise-vs-PyTorch ratio on a GPU machine.

Same workload and same precision: PreAct ResNet-18 (tools/pytorch_models.py), batch 128 of 3x32x32 uniform
images, channels-first (NCHW) float32, TF32 on for convolutions and matmuls, cuDNN algorithm search on
(cudnn.benchmark, as classwise's default cudnnFind*Ex), SGD lr 0.1 momentum 0.9 weight decay 5e-4.
  train step: zero_grad, forward, cross-entropy, backward, SGD step
  PGD step:   eval mode, forward + backward to the input only (torch.autograd.grad w.r.t. the input, so no
              weight-gradient kernels run, as under classwise's InputGradOnlyGuard)
Median of timed repetitions after warm-up, each ending with torch.cuda.synchronize(). Prints the same keys as
build/bench/bench_cuda:

    /usr/bin/python3 tools/bench_pytorch_gpu.py [--quick]

Set TF32=0 in the environment to compare with CLASSWISE_TF32=0 runs. Without a GPU it prints why and exits 0, or 1
under CLASSWISE_REQUIRE_GPU=1.
"""
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_models import PreActResNet18  # noqa: E402


def median_ms(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def gpu_required():
    """CLASSWISE_REQUIRE_GPU=1 (a run on a GPU machine): a skip would read as a clean run, so it fails instead."""
    value = os.environ.get("CLASSWISE_REQUIRE_GPU", "")
    if value not in ("", "0", "1"):
        sys.exit("CLASSWISE_REQUIRE_GPU='%s': expected 1 (GPU skips fail) or 0/unset" % value)
    return value == "1"


def main():
    if not torch.cuda.is_available():
        why = "torch.cuda.is_available() is False"
        if gpu_required():
            print("bench_pytorch_gpu: CLASSWISE_REQUIRE_GPU=1 but " + why, file=sys.stderr)
            return 1
        print("PyTorch GPU benchmark skipped: " + why)
        return 0
    quick = len(sys.argv) > 1 and sys.argv[1] == "--quick"
    warmup, reps = (3, 5) if quick else (10, 30)
    tf32 = os.environ.get("TF32", "1") != "0"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda:0")
    props = torch.cuda.get_device_properties(dev)
    print(f"PyTorch {torch.__version__} (cuDNN {torch.backends.cudnn.version()}) on {props.name}, "
          f"compute capability {props.major}.{props.minor}, {props.multi_processor_count} SMs")
    print(f"TF32: {'on' if tf32 else 'off'}")

    batch = 128
    torch.manual_seed(0)
    model = PreActResNet18(num_classes=10).to(dev)
    gen = torch.Generator(device="cpu").manual_seed(1)
    x = torch.rand(batch, 3, 32, 32, generator=gen).to(dev)
    y = (torch.arange(batch) % 10).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)

    model.train()

    def train_step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(warmup):
        train_step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats(dev)
    train_ms = median_ms(train_step, reps)
    train_alloc = torch.cuda.max_memory_allocated(dev) / 2**20
    train_reserved = torch.cuda.max_memory_reserved(dev) / 2**20

    model.eval()

    def pgd_step():
        xa = x.detach().requires_grad_(True)
        loss = F.cross_entropy(model(xa), y)
        (g,) = torch.autograd.grad(loss, xa)
        return g

    for _ in range(warmup):
        pgd_step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats(dev)
    pgd_ms = median_ms(pgd_step, reps)
    pgd_alloc = torch.cuda.max_memory_allocated(dev) / 2**20
    pgd_reserved = torch.cuda.max_memory_reserved(dev) / 2**20

    print(f"workload: PreAct ResNet-18, batch {batch}, 3x32x32, SGD momentum 0.9, "
          f"median of {reps} after {warmup} warm-up")
    print(f"train_step_ms: {train_ms:.2f}")
    print(f"train_images_per_s: {batch * 1000.0 / train_ms:.0f}")
    print(f"pgd_step_ms: {pgd_ms:.2f}")
    print(f"pgd_images_per_s: {batch * 1000.0 / pgd_ms:.0f}")
    print(f"train_peak_memory_mib: {train_alloc:.1f} in use, {train_reserved:.1f} reserved")
    print(f"pgd_peak_memory_mib: {pgd_alloc:.1f} in use, {pgd_reserved:.1f} reserved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
