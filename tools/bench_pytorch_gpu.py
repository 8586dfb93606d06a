#!/usr/bin/python3
"""PyTorch eager twin of bench/bench_cuda.cpp, for the classwise-vs-PyTorch ratio on a GPU machine.

Same workload: PreAct ResNet-18 (tools/pytorch_models.py), batch 128 of 3x32x32 uniform images, cuDNN
algorithm search on (cudnn.benchmark, as classwise's default cudnnFind*Ex), SGD lr 0.1 momentum 0.9 weight decay
5e-4, in four modes: fp32 (TF32 off: compare with CLASSWISE_TF32=0), tf32 (classwise's default), bf16 (autocast
bf16 + channels_last, PyTorch's fast path) and compile (tf32 + torch.compile).
  train step: zero_grad, forward, cross-entropy, backward, SGD step
  PGD step:   eval mode, forward + backward to the input only (torch.autograd.grad w.r.t. the input, so no
              weight-gradient kernels run, as under classwise's InputGradOnlyGuard)
  AT step:    PGD-10 adversarial training (train-mode attack, then one training step), as classwise's pgd_at
Median of timed repetitions after warm-up, each ending with torch.cuda.synchronize(). Prints the same keys as
build/bench/bench_cuda, each prefixed by the mode:

    /usr/bin/python3 tools/bench_pytorch_gpu.py [--quick] [fp32|tf32|bf16|compile ...]

Without a GPU it prints why and exits 0, or 1
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


def pgd_at_step(model, opt, x, y, eps=8 / 255, alpha=2 / 255, steps=10):
    """Rice et al.'s PGD-10 adversarial-training step, as classwise's pgd_at: uniform start, ten train-mode
    input-gradient steps (torch.autograd.grad w.r.t. the input: no weight-gradient kernels), one SGD step."""
    delta = (torch.rand_like(x) * 2 - 1) * eps
    x_adv = (x + delta).clamp(0, 1)
    for _ in range(steps):
        x_adv.requires_grad_(True)
        (g,) = torch.autograd.grad(F.cross_entropy(model(x_adv), y), x_adv)
        x_adv = torch.min(torch.max(x_adv.detach() + alpha * g.sign(), x - eps), x + eps).clamp(0, 1)
    opt.zero_grad(set_to_none=True)
    F.cross_entropy(model(x_adv), y).backward()
    opt.step()


def measure(mode, warmup, reps, dev):
    """One precision mode: fp32 (TF32 off), tf32, bf16 (autocast bf16 + channels_last), compile (tf32 +
    torch.compile of the model)."""
    tf32 = mode != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    batch = 128
    torch.manual_seed(0)
    model = PreActResNet18(num_classes=10).to(dev)
    gen = torch.Generator(device="cpu").manual_seed(1)
    x = torch.rand(batch, 3, 32, 32, generator=gen).to(dev)
    y = (torch.arange(batch) % 10).to(dev)
    if mode == "bf16":
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    net = torch.compile(model) if mode == "compile" else model
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=(mode == "bf16"))

    def train_step():
        with autocast:
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(net(x), y).backward()
            opt.step()

    def pgd_step():
        with autocast:
            xa = x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(F.cross_entropy(net(xa), y), xa)
        return g

    def at_step():
        with autocast:
            pgd_at_step(net, opt, x, y)

    out = {}
    for name, fn, train_mode in (("train", train_step, True), ("pgd", pgd_step, False), ("at", at_step, True)):
        model.train(train_mode)
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(dev)
        ms = median_ms(fn, reps)
        out[name] = (ms, torch.cuda.max_memory_allocated(dev) / 2**20, torch.cuda.max_memory_reserved(dev) / 2**20)
    for name, (ms, alloc, reserved) in out.items():
        print(f"{mode} {name}_step_ms: {ms:.2f}")
        print(f"{mode} {name}_images_per_s: {batch * 1000.0 / ms:.0f}")
        print(f"{mode} {name}_peak_memory_mib: {alloc:.1f} in use, {reserved:.1f} reserved")
    sys.stdout.flush()


def main():
    if not torch.cuda.is_available():
        why = "torch.cuda.is_available() is False"
        if gpu_required():
            print("bench_pytorch_gpu: CLASSWISE_REQUIRE_GPU=1 but " + why, file=sys.stderr)
            return 1
        print("PyTorch GPU benchmark skipped: " + why)
        return 0
    args = sys.argv[1:]
    quick = "--quick" in args
    modes = [a for a in args if not a.startswith("--")] or ["fp32", "tf32", "bf16", "compile"]
    warmup, reps = (3, 5) if quick else (10, 30)
    dev = torch.device("cuda:0")
    props = torch.cuda.get_device_properties(dev)
    print(f"PyTorch {torch.__version__} (cuDNN {torch.backends.cudnn.version()}) on {props.name}, "
          f"compute capability {props.major}.{props.minor}, {props.multi_processor_count} SMs")
    print(f"workload: PreAct ResNet-18, batch 128, 3x32x32, SGD momentum 0.9, median of {reps} after {warmup} warm-up")
    for mode in modes:
        if mode not in ("fp32", "tf32", "bf16", "compile"):
            sys.exit(f"bench_pytorch_gpu: unknown mode '{mode}': expected fp32, tf32, bf16 or compile")
        try:
            measure(mode, warmup, reps, dev)
        except Exception as e:  # torch.compile may not work on every machine: say so and go on
            print(f"{mode}: failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
