#!/usr/bin/python3
"""PyTorch twin of `build/tools/train --method pgd_at` on CIFAR-10 (PreAct ResNet-18), for the GPU check of the
CUDA backend: the same recipe at the same epoch count, then clean and PGD-20 accuracy per class on the first
--eval-n test images, written in results.json's shape (evaluations[].name/accuracy/per_class_accuracy).

Recipe (classwise's defaults for pgd_at on CIFAR-10, Rice et al.): SGD lr 0.1, momentum 0.9, weight decay 5e-4 on
every parameter, batch 128, piecewise lr (/10 at 50% and 75% of training, updated every iteration at
epoch + (i+1)/n), random crop (4 px, reflect padding) + horizontal flip, CIFAR mean/std normalisation inside the
model, PGD-10 (eps 8/255, alpha 2/255, uniform start) crafted in train mode, the loss on x_adv in train mode, then a
train-mode clean forward (BN statistics see clean batches, as Rice/CFA). Evaluation: eval mode, PGD-20 alpha 2/255
with one uniform start.

    /usr/bin/python3 tools/train_pytorch_twin.py --data DIR --epochs 5 --out twin.json
    /usr/bin/python3 tools/train_pytorch_twin.py --compare twin.json RUN/eval_last/results.json

DIR holds CIFAR-10's binary files (data_batch_1..5.bin, test_batch.bin or test.bin), whole or cut to their first
records; every training record present is used. --compare prints overall and per-class differences and the
check of the GPU issue (overall within 2 points, every class within 6).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_models import PreActResNet18  # noqa: E402

MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2471, 0.2435, 0.2616)
CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]


def read_records(path):
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size % 3073:
        sys.exit(f"{path}: {raw.size} bytes is not a whole number of 3073-byte CIFAR-10 records")
    raw = raw.reshape(-1, 3073)
    return raw[:, 1:].reshape(-1, 3, 32, 32).astype(np.float32) / 255.0, raw[:, 0].astype(np.int64)


def load(data):
    parts = [read_records(os.path.join(data, f"data_batch_{b}.bin")) for b in range(1, 6)]
    x_train = np.concatenate([p[0] for p in parts])
    y_train = np.concatenate([p[1] for p in parts])
    test = next((os.path.join(data, n) for n in ("test_batch.bin", "test.bin") if os.path.exists(os.path.join(data, n))),
                None)
    if test is None:
        sys.exit(f"{data}: no test_batch.bin or test.bin")
    x_test, y_test = read_records(test)
    return x_train, y_train, x_test, y_test


class Normalized(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.register_buffer("mean", torch.tensor(MEAN).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(STD).view(1, 3, 1, 1))

    def forward(self, x):
        return self.net((x - self.mean) / self.std)


def augment(x, gen):
    """Random 32x32 crop of the 4-pixel reflect-padded image, then a horizontal flip with probability 1/2."""
    n = x.shape[0]
    padded = F.pad(x, (4, 4, 4, 4), mode="reflect")
    dx = torch.randint(0, 9, (n,), generator=gen)
    dy = torch.randint(0, 9, (n,), generator=gen)
    flip = torch.rand(n, generator=gen) < 0.5
    out = torch.empty_like(x)
    for i in range(n):
        img = padded[i, :, dy[i]:dy[i] + 32, dx[i]:dx[i] + 32]
        out[i] = img.flip(-1) if flip[i] else img
    return out


def pgd(model, x, y, eps, alpha, steps):
    x_adv = (x + (torch.rand_like(x) * 2 - 1) * eps).clamp(0, 1)
    for _ in range(steps):
        x_adv.requires_grad_(True)
        (g,) = torch.autograd.grad(F.cross_entropy(model(x_adv), y), x_adv)
        x_adv = torch.min(torch.max(x_adv.detach() + alpha * g.sign(), x - eps), x + eps).clamp(0, 1)
    return x_adv.detach()


def piecewise_lr(t, epochs, lr):
    return lr if t < 0.5 * epochs else lr / 10 if t < 0.75 * epochs else lr / 100


def per_class(correct, labels):
    return [float(correct[labels == k].float().mean()) if (labels == k).any() else 0.0 for k in range(10)]


def train(args):
    dev = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = not args.no_tf32
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    x_train, y_train, x_test, y_test = load(args.data)
    x_train, y_train = torch.from_numpy(x_train), torch.from_numpy(y_train)
    model = Normalized(PreActResNet18(num_classes=10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    eps, alpha = 8 / 255, 2 / 255
    n = x_train.shape[0]
    batches = (n + args.batch_size - 1) // args.batch_size
    t0 = time.time()
    for epoch in range(args.epochs):
        order = torch.randperm(n, generator=gen)
        model.train()
        loss_sum, correct, seen, e0 = 0.0, 0, 0, time.time()
        for i in range(batches):
            idx = order[i * args.batch_size:(i + 1) * args.batch_size]
            x = augment(x_train[idx], gen).to(dev, non_blocking=True)
            y = y_train[idx].to(dev, non_blocking=True)
            for group in opt.param_groups:
                group["lr"] = piecewise_lr(epoch + (i + 1) / batches, args.epochs, args.lr)
            x_adv = pgd(model, x, y, eps, alpha, 10)
            logits = model(x_adv)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                model(x)  # Rice/CFA: the BN running statistics also see the clean batch
            loss_sum += float(loss) * len(idx)
            correct += int((logits.argmax(1) == y).sum())
            seen += len(idx)
        print(f"epoch {epoch + 1}/{args.epochs}: train adv loss {loss_sum / seen:.4f}, adv acc {correct / seen:.4f}, "
              f"{time.time() - e0:.1f} s", flush=True)
    train_s = time.time() - t0

    model.eval()
    xt = torch.from_numpy(x_test[:args.eval_n]).to(dev)
    yt = torch.from_numpy(y_test[:args.eval_n]).to(dev)
    clean_ok, robust_ok = [], []
    for s in range(0, len(yt), 256):
        x, y = xt[s:s + 256], yt[s:s + 256]
        with torch.no_grad():
            clean_ok.append(model(x).argmax(1) == y)
        x_adv = pgd(model, x, y, eps, alpha, 20)
        with torch.no_grad():
            robust_ok.append(model(x_adv).argmax(1) == y)
    clean_ok, robust_ok = torch.cat(clean_ok).cpu(), torch.cat(robust_ok).cpu()
    labels = yt.cpu()
    result = {"tool": "tools/train_pytorch_twin.py", "device": torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu",
              "torch": torch.__version__, "epochs": args.epochs, "train_images": n, "train_seconds": train_s,
              "classes": CLASSES, "num_examples": len(labels),
              "evaluations": [{"name": name, "accuracy": float(ok.float().mean()), "per_class_accuracy": per_class(ok, labels)}
                              for name, ok in (("clean", clean_ok), ("pgd20", robust_ok))]}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"trained {args.epochs} epochs on {n} images in {train_s:.1f} s; clean {result['evaluations'][0]['accuracy']:.4f}, "
          f"pgd20 {result['evaluations'][1]['accuracy']:.4f} on {len(labels)} test images -> {args.out}")


def compare(twin_path, ours_path):
    def evaluations(path):
        try:
            with open(path) as f:
                return {e["name"]: e for e in json.load(f)["evaluations"]}
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"{path}: not a results.json with evaluations ({e})")
    twin, ours = evaluations(twin_path), evaluations(ours_path)
    ok = True
    for name in ("clean", "pgd20"):
        if name not in twin or name not in ours:
            sys.exit(f"compare: '{name}' missing in {twin_path if name not in twin else ours_path}")
        a, b = twin[name], ours[name]
        d = 100 * (b["accuracy"] - a["accuracy"])
        worst = max(range(10), key=lambda k: abs(b["per_class_accuracy"][k] - a["per_class_accuracy"][k]))
        dk = 100 * (b["per_class_accuracy"][worst] - a["per_class_accuracy"][worst])
        good = abs(d) <= 2 and abs(dk) <= 6
        ok &= good
        print(f"{name}: pytorch {100 * a['accuracy']:.1f}%, classwise {100 * b['accuracy']:.1f}% ({d:+.1f} points); "
              f"largest class gap {CLASSES[worst]} {dk:+.1f} points -> {'within' if good else 'OUTSIDE'} 2/6 points")
        print("  per class (pytorch / classwise): " + ", ".join(
            f"{CLASSES[k]} {100 * a['per_class_accuracy'][k]:.0f}/{100 * b['per_class_accuracy'][k]:.0f}" for k in range(10)))
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", help="folder of CIFAR-10 binary files")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--eval-n", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-tf32", action="store_true")
    p.add_argument("--out", default="twin.json")
    p.add_argument("--compare", nargs=2, metavar=("TWIN_JSON", "RESULTS_JSON"))
    args = p.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.data:
        p.error("--data is required (or --compare)")
    train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
