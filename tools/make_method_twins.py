#!/usr/bin/python3
"""Writes tests/fixtures/method_twins.safetensors: every baseline training method of train/methods/ run by an
independent PyTorch twin (written from docs/protocols/training.md §4-§9 and the reference codes: Rice's PGD-AT, Wong's FGSM-RS,
TRADES' trades.py, FAT's earlystop.py, MART's mart.py) for three SGD steps on one fixed batch, so that
tests/test_train_methods.cpp can compare, step by step, the loss, the per-sample terms, the logits trained on and
the weights and BN running statistics after the step; for TRADES and MART also the first x', to test their
outer losses alone.

Not part of the build or the tests; needs Debian's python3-torch and python3-numpy:
    /usr/bin/python3 tools/make_method_twins.py

Setting (the test hard-codes the same numbers):
  net     conv1 3->4 3x3 pad 1 (no bias), bn1, relu, conv2 4->6 3x3 stride 2 pad 1, bn2, relu, global average pool,
          fc 6->3; weights from torch.manual_seed(7) default init, BN affine and running statistics perturbed
  batch   x [8, 3, 8, 8] ~ U[0,1), y in {0, 1, 2}
  attack  eps 8/255, alpha 2/255, K = 5 (FGSM-RS: alpha 1.25 eps); FAT original tau 1, omega 0.001; FAT cfa tau 3
  optim   SGD lr 0.1, momentum 0.9, weight decay 5e-4, 3 steps; after each step a clean forward in the mode the
          method asks for (PGD-AT: train)
Randomness: random starts come from classwise's Rng (xoshiro256**, seed 1234 per case), which PyRng below
replays exactly (uniform draws are exact float32 arithmetic; normal draws use the same double-precision libm
calls through Python's math module), in the order the C++ methods draw. Everything else runs in float64 from
the float32 inputs, weights and starts: the fixture is the exact answer, and the C++ float32 run is compared to it.
"""
import math
import os
import sys
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_writer import safetensors_bytes  # noqa: E402

MASK = (1 << 64) - 1
B, C, S, CLASSES = 8, 3, 8, 3
EPS = np.float32(8.0 / 255.0)
ALPHA = np.float32(2.0 / 255.0)
STEPS = 5
LR, MOMENTUM, WD, SGD_STEPS = 0.1, 0.9, 5e-4, 3
SEED = 1234


class PyRng:
    """engine/rng.cpp, bit for bit."""

    def __init__(self, seed):
        x = seed
        self.s = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & MASK
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
            self.s.append(z ^ (z >> 31))
        self.cached = None

    @staticmethod
    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & MASK

    def next_u64(self):
        s = self.s
        result = (self.rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self.rotl(s[3], 45)
        return result

    def uniform(self):
        return np.float32(self.next_u64() >> 40) * np.float32(1.0 / 16777216.0)

    def uniform_range(self, lo, hi):
        return np.float32(lo + np.float32(hi - lo) * self.uniform())

    def normal(self):
        if self.cached is not None:
            v, self.cached = self.cached, None
            return v
        u1 = (float(self.next_u64() >> 11) + 1.0) * (1.0 / 9007199254740992.0)
        u2 = float(self.next_u64() >> 11) * (1.0 / 9007199254740992.0)
        r = math.sqrt(-2.0 * math.log(u1))
        self.cached = np.float32(r * math.sin(2.0 * math.pi * u2))
        return np.float32(r * math.cos(2.0 * math.pi * u2))


def uniform_start(x32, eps, rng):
    """attacks/steps.h uniform_linf_start: clip_box(x + U(-eps, eps)), float32."""
    n, dim = x32.shape[0], x32[0].size
    d = np.empty(n * dim, dtype=np.float32)
    for i in range(n * dim):
        d[i] = rng.uniform_range(np.float32(-eps[i // dim]), np.float32(eps[i // dim]))
    return np.clip(x32 + d.reshape(x32.shape), np.float32(0), np.float32(1))


def noisy_start(x32, sigma, rng):
    """train/methods/method_util.h noisy_start: x + sigma * N(0, I), not clipped, float32."""
    d = np.array([np.float32(sigma) * rng.normal() for _ in range(x32.size)], dtype=np.float32)
    return x32 + d.reshape(x32.shape)


def f64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float32).astype(np.float64))


def project(xa, x, eps):
    e = eps.view(-1, 1, 1, 1)
    return torch.min(torch.max(xa, x - e), x + e).clamp(0, 1)


def make_net():
    return nn.Sequential(OrderedDict([
        ('conv1', nn.Conv2d(3, 4, 3, padding=1, bias=False)), ('bn1', nn.BatchNorm2d(4)), ('relu1', nn.ReLU()),
        ('conv2', nn.Conv2d(4, 6, 3, stride=2, padding=1)), ('bn2', nn.BatchNorm2d(6)), ('relu2', nn.ReLU()),
        ('pool', nn.AdaptiveAvgPool2d(1)), ('flat', nn.Flatten()), ('fc', nn.Linear(6, CLASSES))]))


def initial_state():
    torch.manual_seed(7)
    net = make_net()
    with torch.no_grad():
        for bn in (net.bn1, net.bn2):
            bn.weight.copy_(1 + 0.3 * torch.randn_like(bn.weight))
            bn.bias.copy_(0.2 * torch.randn_like(bn.bias))
            bn.running_mean.copy_(0.2 * torch.randn_like(bn.running_mean))
            bn.running_var.copy_(1 + 0.5 * torch.rand_like(bn.running_var))
    return net.state_dict()


def input_grad(model, xa, loss_fn):
    xa = xa.detach().requires_grad_(True)
    g, = torch.autograd.grad(loss_fn(model(xa)), xa)
    return g


# ---- the methods' adversarial points -----------------------------------------------------------------------
def pgd(model, x, y, start, eps, alpha, steps, train):
    model.train(train)
    xa = start
    for _ in range(steps):
        g = input_grad(model, xa, lambda z: F.cross_entropy(z, y, reduction='sum'))
        xa = project(xa + alpha * g.sign(), x, eps)
    return xa.detach()


def trades_adv(model, x, start, eps, alpha, steps):
    model.eval()
    with torch.no_grad():
        clean = F.softmax(model(x), dim=1)
    xa = start
    for _ in range(steps):
        g = input_grad(model, xa, lambda z: F.kl_div(F.log_softmax(z, dim=1), clean, reduction='sum'))
        xa = project(xa + alpha * g.sign(), x, eps)
    return xa.detach()


def fat_original(model, x, y, start, eps, alpha, steps, tau, omega, rng):
    model.eval()
    n, dim = x.shape[0], x[0].numel()
    xa = start.clone()
    budget, active = [tau] * n, [True] * n
    for _ in range(steps):
        idx = [i for i in range(n) if active[i]]
        sub = xa[idx]
        out = model(sub).detach()
        g = input_grad(model, sub, lambda z: F.cross_entropy(z, y[idx], reduction='mean'))
        moving = [True] * len(idx)
        for p, i in enumerate(idx):
            if out[p].argmax().item() != y[i].item():
                if budget[i] == 0:
                    active[i], moving[p] = False, False
                else:
                    budget[i] -= 1
        if not any(active):
            break
        noise = np.zeros((len(idx), dim), dtype=np.float32)
        for p in range(len(idx)):
            if moving[p]:
                for j in range(dim):
                    noise[p, j] = np.float32(omega) * rng.normal()
        a = torch.tensor([float(alpha) if m else 0.0 for m in moving], dtype=torch.float64).view(-1, 1, 1, 1)
        new = sub + a * g.sign() + f64(noise).view(sub.shape)
        xa[idx] = project(new, x[idx], eps[idx])
    return xa.detach()


def fat_cfa(model, x, y, start, eps, alpha, steps, tau):
    model.train()
    xa = start
    counter = torch.full((x.shape[0],), float(tau), dtype=torch.float64)
    for _ in range(steps):
        xg = xa.detach().requires_grad_(True)
        out = model(xg)
        g, = torch.autograd.grad(F.cross_entropy(out, y, reduction='sum'), xg)
        wrong = (out.detach().argmax(1) != y).double()
        # CFA's fat_loss: a sample moves while control > 0 at the check; a misclassified one then spends 1
        a = (alpha * (counter > 0).double()).view(-1, 1, 1, 1)
        counter = (counter - wrong).clamp(min=0)
        xa = project(xa + a * g.sign(), x, eps)
    return xa.detach()


# ---- the outer losses (per-sample terms, summing to the batch loss) -------------------------------------------
def ce_terms(model, xa, y):
    model.train()
    z = model(xa)
    return F.cross_entropy(z, y, reduction='none') / len(y), z


def trades_terms(model, x, xa, y, beta, cfa):
    model.train()
    nat, adv = model(x), model(xa)
    ce = F.cross_entropy(nat, y, reduction='none')
    kl = F.kl_div(F.log_softmax(adv, dim=1), F.softmax(nat, dim=1), reduction='none').sum(1)
    if cfa:   # CFA's code: b = beta / (1 + beta), L_i = (1 - b) CE_i + b KL_i
        b = beta / (1 + beta)
        return ((1 - b) * ce + b * kl) / len(y), adv
    return (ce + beta * kl) / len(y), adv


def mart_terms(model, x, xa, y, beta):
    """MART's mart.py, with its reduction turned into per-sample terms."""
    model.train()
    logits, logits_adv = model(x), model(xa)
    adv_probs = F.softmax(logits_adv, dim=1)
    tmp1 = torch.argsort(adv_probs, dim=1)[:, -2:]
    new_y = torch.where(tmp1[:, -1] == y, tmp1[:, -2], tmp1[:, -1])
    bce = F.cross_entropy(logits_adv, y, reduction='none') + \
        F.nll_loss(torch.log(1.0001 - adv_probs + 1e-12), new_y, reduction='none')
    nat_probs = F.softmax(logits, dim=1)
    true_probs = torch.gather(nat_probs, 1, y.unsqueeze(1).long()).squeeze()
    kl = torch.sum(nn.KLDivLoss(reduction='none')(torch.log(adv_probs + 1e-12), nat_probs), dim=1)
    return (bce + beta * kl * (1.0000001 - true_probs)) / len(y), logits_adv


# ---- the cases ---------------------------------------------------------------------------------------------
CLASS_BETA = [6.0, 2.0, 4.0]
CLASS_EPS = [np.float32(8.0 / 255), np.float32(4.0 / 255), np.float32(6.0 / 255)]


def case_step(name, model, x32, x, y, rng):
    """One batch of case `name`: (per-sample terms, logits trained on, x_adv, clean forward mode after the step)."""
    n = x.shape[0]
    eps = torch.full((n,), float(EPS), dtype=torch.float64)
    yl = y.tolist()
    if name == 'natural':
        per, z = ce_terms(model, x, y)
        return per, z, x, None
    if name in ('pgd_at', 'pgd_at_eval'):
        start = f64(uniform_start(x32, [EPS] * n, rng))
        xa = pgd(model, x, y, start, eps, float(ALPHA), STEPS, train=name == 'pgd_at')
        per, z = ce_terms(model, xa, y)
        return per, z, xa, 'train' if name == 'pgd_at' else None
    if name == 'fgsm_rs':
        start = f64(uniform_start(x32, [EPS] * n, rng))
        xa = pgd(model, x, y, start, eps, float(np.float32(1.25) * EPS), 1, train=True)
        per, z = ce_terms(model, xa, y)
        return per, z, xa, None
    if name in ('trades', 'trades_cfa'):
        cfa = name == 'trades_cfa'
        eps_i = [CLASS_EPS[c] for c in yl] if cfa else [EPS] * n
        start = f64(noisy_start(x32, 0.001, rng))
        xa = trades_adv(model, x, start, torch.tensor([float(e) for e in eps_i], dtype=torch.float64),
                        float(ALPHA), STEPS)
        beta = torch.tensor([CLASS_BETA[c] for c in yl], dtype=torch.float64) if cfa else 6.0
        per, z = trades_terms(model, x, xa, y, beta, cfa)
        return per, z, xa, None
    if name == 'fat_original':
        start = f64(uniform_start(x32, [EPS] * n, rng))
        xa = fat_original(model, x, y, start, eps, float(ALPHA), STEPS, 1, 0.001, rng)
        per, z = ce_terms(model, xa, y)
        return per, z, xa, None
    if name == 'fat_cfa':
        start = f64(uniform_start(x32, [EPS] * n, rng))
        xa = fat_cfa(model, x, y, start, eps, float(ALPHA), STEPS, 3)
        per, z = ce_terms(model, xa, y)
        return per, z, xa, None
    if name == 'mart':
        start = f64(noisy_start(x32, 0.001, rng))
        xa = pgd(model, x, y, start, eps, float(ALPHA), STEPS, train=False)
        per, z = mart_terms(model, x, xa, y, 5.0)
        return per, z, xa, None
    raise ValueError(name)


CASES = ['natural', 'pgd_at', 'pgd_at_eval', 'fgsm_rs', 'trades', 'trades_cfa', 'fat_original', 'fat_cfa', 'mart']


def run_case(name, state, x32, y):
    model = make_net().double()
    model.load_state_dict(state)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WD)
    rng = PyRng(SEED)
    x = f64(x32)
    out, losses = {}, []
    for step in range(SGD_STEPS):
        opt.zero_grad()
        per, z, xa, clean_mode = case_step(name, model, x32, x, y, rng)
        loss = per.sum()
        loss.backward()
        opt.step()
        if clean_mode is not None:
            model.train(clean_mode == 'train')
            with torch.no_grad():
                model(x)
        losses.append(loss.item())
        out[f'{name}.per_sample{step}'] = per.detach()
        out[f'{name}.logits{step}'] = z.detach()
        if step == 0 and name in ('trades', 'trades_cfa', 'mart'):   # their outer losses are tested alone
            out[name + '.xadv0'] = xa.detach()
        for k, v in model.state_dict().items():
            if not k.endswith('num_batches_tracked'):
                out[f'{name}.after{step}.{k}'] = v.detach().clone()
    out[name + '.loss'] = torch.tensor(losses, dtype=torch.float64)
    return out


def main():
    torch.set_num_threads(1)
    state = initial_state()
    g = torch.Generator().manual_seed(11)
    x32 = torch.rand(B, C, S, S, generator=g).numpy().astype(np.float32)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 1, 0])
    tensors = OrderedDict()
    tensors['x'] = torch.from_numpy(x32)
    tensors['y'] = y.double()
    for k, v in state.items():
        if not k.endswith('num_batches_tracked'):
            tensors['init.' + k] = v
    for name in CASES:
        out = run_case(name, {k: v.double() if v.is_floating_point() else v for k, v in state.items()}, x32, y)
        tensors.update(out)
        print(f'{name:13s} losses {out[name + ".loss"].tolist()}')
    metadata = {'torch': torch.__version__, 'cases': ','.join(CASES), 'script': 'tools/make_method_twins.py'}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures',
                        'method_twins.safetensors')
    data = safetensors_bytes(tensors, metadata)
    with open(path, 'wb') as f:
        f.write(data)
    print(f'wrote {os.path.normpath(path)} ({len(data)} bytes)')


if __name__ == '__main__':
    main()
