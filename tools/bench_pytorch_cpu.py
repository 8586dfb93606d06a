#!/usr/bin/python3
"""The workload of `make bench` (bench/bench_engine.cpp) in PyTorch on the CPU, for the speed ratio.

Batch 128: one training step (forward + backward + SGD update) and one input-gradient step (forward + backward to
the input only, model in eval mode, parameters frozen) of the small MNIST CNN and of PreAct ResNet-18.
Median of timed repetitions after two warm-up steps. Uses Debian's python3-torch; never needed by the build.
"""
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from pytorch_models import PreActResNet18  # the same definition the golden and key-list fixtures use


def small_cnn():
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(1024, 200), nn.ReLU(), nn.Linear(200, 10))


def median_ms(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def bench(name, model, shape, reps):
    x = torch.rand(128, *shape)
    y = torch.arange(128) % 10
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)

    def train_step():
        model.train()
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    def input_grad_step():
        model.eval()
        xa = x.clone().requires_grad_(True)
        F.cross_entropy(model(xa), y).backward(inputs=[xa])

    t = median_ms(train_step, 2, reps)
    g = median_ms(input_grad_step, 2, reps)
    print(f"{name:18s} batch 128  train step {t:8.1f} ms ({128000 / t:7.1f} img/s)   "
          f"input-grad step {g:8.1f} ms ({128000 / g:7.1f} img/s)")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    torch.set_num_threads(2)
    torch.manual_seed(0)
    print(f"PyTorch {torch.__version__} CPU benchmark: {torch.get_num_threads()} threads")
    bench("small CNN 1x28x28", small_cnn(), (1, 28, 28), 3 if quick else 11)
    bench("PreAct ResNet-18", PreActResNet18(), (3, 32, 32), 1 if quick else 5)
