#!/usr/bin/python3
"""The workloads of `make bench` (bench/bench_engine.cpp) in PyTorch on the CPU, for the speed ratios.

Batch 128, the same models (tools/pytorch_models.py, parameter counts checked against ours) and the same rows:
  train       one training step (forward + backward + SGD update)
  input_grad  one input-gradient step in eval mode (forward + backward to the input only, parameters untouched)
  pgd10_at    one PGD-10 adversarial-training step as classwise's pgd_at runs it: ten train-mode input-gradient
              steps (uniform start in the eps-ball, sign step of alpha, projection to the ball and to [0, 1]), then
              the train-mode training step on x_adv
each in fp32 and under torch.autocast("cpu", dtype=torch.bfloat16) (forward passes autocast, backward outside).
After each pgd10_at row, one more step under torch.profiler says where its time goes (convolutions with their
reorders, matrix products, the rest), as bench_engine says it for ours.
Columns as bench_engine prints them: ms/step (median of repetitions after warm-up), GFLOP/step, GFLOP/s, that
rate as a share of the reference sgemm, images/s. The GFLOP are counted from the aten calls PyTorch makes (a
dispatch mode sees every convolution, convolution_backward with its output mask, mm and addmm), at batch 2 and
scaled: so the attack steps count no weight gradients and the training step no data gradient for the first
layer, as in classwise; the two counts are checked equal.

    tools/bench_pytorch_cpu.py [--quick] [--workloads small,preact,wrn] [--modes fp32,bf16] [--ours FILE]

--ours FILE: bench_engine's output from the same session; then the reference sgemm is the engine's (so every share
has one denominator), the parameter and FLOP counts are checked against ours (exit 1 on a difference), and a table
of ours / PyTorch rates follows. `make bench` runs both. Uses Debian's python3-torch; without it, prints why and
exits 0 (never needed by the build).
"""
import argparse
import contextlib
import re
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError as e:  # python3-torch is optional (scripts/setup_debian.sh)
    print(f"PyTorch comparison skipped: {e}")
    sys.exit(0)

from pytorch_models import make  # the definitions the parameter-count and golden fixtures use

BATCH = 128
COUNT_BATCH = 2  # the FLOP count runs each step at this batch; every counted op is linear in the batch

# key, arch, channels, side, eps, pgd_at_only, reps, pgd10_at warm-up, pgd10_at reps (quick: second tuple)
WORKLOADS = [
    ("small", "small_cnn", 1, 28, 0.1, False, (11, 1, 5), (3, 1, 1)),
    ("preact", "preact_resnet18", 3, 32, 8 / 255, False, (5, 1, 3), (1, 0, 1)),
    ("wrn", "wrn28_10", 3, 32, 8 / 255, True, (1, 0, 1), (1, 0, 1)),
]
STEPS = ("train", "input_grad", "pgd10_at")


def sorted_ms(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return sorted(times)


def median_ms(fn, warmup, reps):
    return statistics.median(sorted_ms(fn, warmup, reps))


# Where a step's time goes in PyTorch, as bench_engine prints it for ours: one more step under the profiler, its ops'
# self times in three groups. oneDNN's reorders run inside PyTorch's convolution ops, so they count with them.
CONV_OPS = {"aten::mkldnn_convolution", "aten::convolution_backward"}
MATMUL_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::matmul"}


def time_split(fn):
    """Shares of one run of fn: (convolutions with their reorders, matrix products), of all ops' self time."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    self_us = {e.key: e.self_cpu_time_total for e in prof.key_averages()}
    total = sum(self_us.values()) or 1
    return (sum(v for k, v in self_us.items() if k in CONV_OPS) / total,
            sum(v for k, v in self_us.items() if k in MATMUL_OPS) / total)


def gemm_gflops(dtype, size=2048, reps=5):
    a = torch.full((size, size), 0.01).to(dtype)
    b = torch.full((size, size), 0.02).to(dtype)
    best = sorted_ms(lambda: torch.mm(a, b), 1, reps)[0]
    return 2.0 * size ** 3 / best / 1e6


def prod(xs):
    p = 1
    for v in xs:
        p *= v
    return p


class FlopCounter(TorchDispatchMode):
    """2·MACs of every convolution and matrix product PyTorch runs. Backward ops run with grad mode off, which
    separates them from the forward; convolution_backward's output mask says which gradients it computes."""

    def __init__(self):
        super().__init__()
        self.forward = self.backward = 0.0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__ if hasattr(func, "__name__") else str(func)
        flops = 0.0
        if name.startswith("convolution_backward"):
            grad_out, weight, mask = args[0], args[2], args[10]
            per_grad = 2.0 * prod(grad_out.shape) * prod(weight.shape[1:])
            flops = per_grad * (int(mask[0]) + int(mask[1]))
        elif name.startswith("convolution"):
            out = func(*args, **(kwargs or {}))
            self._add(2.0 * prod(out.shape) * prod(args[1].shape[1:]))
            return out
        elif name.startswith("addmm"):
            flops = 2.0 * args[1].shape[0] * args[1].shape[1] * args[2].shape[1]
        elif name.startswith("mm"):
            flops = 2.0 * args[0].shape[0] * args[0].shape[1] * args[1].shape[1]
        self._add(flops)
        return func(*args, **(kwargs or {}))

    def _add(self, flops):
        if torch.is_grad_enabled():
            self.forward += flops
        else:
            self.backward += flops


def make_steps(model, x, y, eps, amp):
    """The three steps on (x, y); amp: forward passes under bf16 autocast."""
    alpha = 2.5 * eps / 10  # classwise's default alpha (2/255 at eps 8/255)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)

    def cast():
        return torch.autocast("cpu", dtype=torch.bfloat16) if amp else contextlib.nullcontext()

    def train_on(images):
        model.train()
        with cast():
            loss = F.cross_entropy(model(images), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    def input_grad():
        model.eval()
        xa = x.clone().requires_grad_(True)
        with cast():
            loss = F.cross_entropy(model(xa), y)
        torch.autograd.grad(loss, [xa])

    def pgd10_at():
        model.train()
        xa = (x + torch.empty_like(x).uniform_(-eps, eps)).clamp(0, 1)
        for _ in range(10):
            xa.requires_grad_(True)
            with cast():
                loss = F.cross_entropy(model(xa), y)
            g, = torch.autograd.grad(loss, [xa])  # the input's gradient only, as classwise's InputGradOnly
            xa = xa.detach() + alpha * g.sign()
            xa = torch.min(torch.max(xa, x - eps), x + eps).clamp(0, 1)
        train_on(xa)

    return {"train": lambda: train_on(x), "input_grad": input_grad, "pgd10_at": pgd10_at}


def batch(n, channels, side):
    return torch.rand(n, channels, side, side), torch.arange(n) % 10


def parse_ours(path):
    """bench_engine's output: the reference sgemm, parameter counts, and rows (model, step) -> (ms, GFLOP)."""
    ours = {"sgemm": None, "params": {}, "rows": {}}
    # A step may carry the convolution setting it ran under (bench_engine --conv): pgd10_at:bf16.
    row = re.compile(r"^(\S+)\s+((?:" + "|".join(STEPS) + r")(?::\w+)?)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+%")
    with open(path) as f:
        for line in f:
            if m := re.match(r"^sgemm \S+ \(engine gemm[^)]*\): ([\d.]+) GFLOP/s", line):
                ours["sgemm"] = float(m.group(1))
            elif m := re.match(r"^(\S+)\s+params (\d+),", line):
                ours["params"][m.group(1)] = int(m.group(2))
            elif m := row.match(line):
                ours["rows"][(m.group(1), m.group(2))] = (float(m.group(3)), float(m.group(4)))
    if ours["sgemm"] is None:
        raise SystemExit(f"bench_pytorch_cpu.py: --ours {path}: no 'sgemm ... (engine gemm ...)' line "
                         "(expected build/bench/bench_engine's output)")
    return ours


def fmt_row(arch, step, ms, gflop, sgemm):
    rate = gflop / ms * 1e3
    return f"{arch:16s} {step:10s} {ms:10.1f} {gflop:10.2f} {rate:8.1f} {100 * rate / sgemm:7.1f}% {BATCH * 1000 / ms:8.1f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--workloads", default="small,preact,wrn")
    p.add_argument("--modes", default="fp32,bf16")
    p.add_argument("--ours", help="bench_engine's output of this session")
    a = p.parse_args()
    keys = [w[0] for w in WORKLOADS]
    chosen = [k for k in a.workloads.split(",") if k]
    for k in chosen:
        if k not in keys:
            raise SystemExit(f"bench_pytorch_cpu.py: --workloads: unknown workload '{k}' (expected {', '.join(keys)})")
    modes = [m for m in a.modes.split(",") if m]
    for m in modes:
        if m not in ("fp32", "bf16"):
            raise SystemExit(f"bench_pytorch_cpu.py: --modes: unknown mode '{m}' (expected fp32, bf16)")
    ours = parse_ours(a.ours) if a.ours else None

    torch.set_num_threads(2)
    print(f"PyTorch {torch.__version__} CPU benchmark: {torch.get_num_threads()} threads, "
          f"oneDNN {'on' if torch.backends.mkldnn.is_available() else 'off'}, batch {BATCH}")
    sgemm = gemm_gflops(torch.float32)
    print(f"sgemm 2048x2048x2048 (torch.mm fp32, best of 5): {sgemm:.1f} GFLOP/s; "
          f"bf16: {gemm_gflops(torch.bfloat16):.1f} GFLOP/s")
    reference = ours["sgemm"] if ours else sgemm
    print(f"%sgemm below: share of {reference:.1f} GFLOP/s "
          f"({'the engine sgemm of ' + a.ours if ours else 'torch.mm fp32 above'})")

    results = {}  # (arch, step, mode) -> (ms, gflop)
    problems = []
    for key, arch, channels, side, eps, at_only, full_reps, quick_reps in WORKLOADS:
        if key not in chosen:
            continue
        reps, at_warmup, at_reps = quick_reps if a.quick else full_reps
        torch.manual_seed(0)
        params = sum(t.numel() for t in make(arch, 10, channels, side).parameters())
        print(f"{arch:16s} params {params}, input {channels}x{side}x{side}")
        if ours and ours["params"].get(arch) not in (None, params):
            problems.append(f"{arch}: classwise has {ours['params'][arch]} parameters, PyTorch {params}")
        steps = ["pgd10_at"] if at_only else list(STEPS)
        # FLOPs per step: fp32 at batch COUNT_BATCH, scaled.
        torch.manual_seed(0)
        counting = make_steps(make(arch, 10, channels, side), *batch(COUNT_BATCH, channels, side), eps, False)
        gflop = {}
        for step in steps:
            with FlopCounter() as c:
                counting[step]()
            gflop[step] = (c.forward + c.backward) * BATCH / COUNT_BATCH / 1e9
        for mode in modes:
            print(f"{'':16s} mode {mode}")
            torch.manual_seed(0)
            run = make_steps(make(arch, 10, channels, side), *batch(BATCH, channels, side), eps, mode == "bf16")
            for step in steps:
                warmup, n = (at_warmup, at_reps) if step == "pgd10_at" else (2, reps)
                ms = median_ms(run[step], warmup, n)
                results[(arch, step, mode)] = (ms, gflop[step])
                print(fmt_row(arch, step, ms, gflop[step], reference), flush=True)
                if step == "pgd10_at" and not at_only:  # one more WRN-28-10 step would take minutes
                    conv, mm = time_split(run[step])
                    print(f"{arch:16s} {step:10s} where the time goes (shares of one step under the profiler, "
                          f"applied to the median): convolutions with their reorders {conv * ms:.1f} ms "
                          f"({100 * conv:.0f}%), matrix products {mm * ms:.1f} ms ({100 * mm:.0f}%), the rest "
                          f"{(1 - conv - mm) * ms:.1f} ms ({100 * (1 - conv - mm):.0f}%)", flush=True)
        if ours:
            for step in steps:
                for (their_arch, their_step), theirs in ours["rows"].items():
                    if their_arch != arch or their_step.split(":")[0] != step:
                        continue
                    if abs(theirs[1] - gflop[step]) > 1e-4 * gflop[step] + 0.006:  # ours prints 2 decimals
                        problems.append(f"{arch} {their_step}: classwise counts {theirs[1]:.2f} GFLOP, "
                                        f"PyTorch {gflop[step]:.2f}")

    if ours:
        print(f"\nours / PyTorch, same session (rate ratios = PyTorch ms / ours ms; above 1: classwise faster); "
              f"%sgemm of the engine's {reference:.1f} GFLOP/s")
        head = f"{'model':16s} {'step':15s} {'ours GFLOP/s':>18s}"
        for mode in modes:
            head += f" {'PyTorch ' + mode:>18s} {'ours/' + mode:>10s}"
        print(head)
        for (arch, step), (ms, gf) in ours["rows"].items():
            line = f"{arch:16s} {step:15s} {gf / ms * 1e3:8.1f} ({100 * gf / ms * 1e3 / reference:5.1f}%)"
            for mode in modes:
                r = results.get((arch, step.split(":")[0], mode))
                line += (f" {r[1] / r[0] * 1e3:8.1f} ({100 * r[1] / r[0] * 1e3 / reference:5.1f}%) {r[0] / ms:9.2f}x"
                         if r else f" {'-':>18s} {'-':>10s}")
            print(line)
    for problem in problems:
        print(f"bench_pytorch_cpu.py: the workloads differ: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
