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


class PreActBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False))

    def forward(self, x):
        a = F.relu(self.bn1(x))
        skip = self.shortcut(a) if self.shortcut is not None else x
        h = self.conv1(a)
        h = self.conv2(F.relu(self.bn2(h)))
        return h + skip


class PreActResNet18(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        layers, cin = [], 64
        for i, w in enumerate([64, 128, 256, 512]):
            blocks = []
            for b in range(2):
                blocks.append(PreActBlock(cin, w, 2 if (i > 0 and b == 0) else 1))
                cin = w
            layers.append(nn.Sequential(*blocks))
        self.layers = nn.Sequential(*layers)
        self.bn = nn.BatchNorm2d(512)
        self.linear = nn.Linear(512, classes)

    def forward(self, x):
        h = F.relu(self.bn(self.layers(self.conv1(x))))
        return self.linear(F.adaptive_avg_pool2d(h, 1).flatten(1))


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
