#!/usr/bin/python3
"""Writes tests/fixtures/faal_twin.safetensors: FAAL (fairness/methods/faal.h, docs/protocols/faal.md) run by an
independent PyTorch twin, written from the authors' FAAL code (ft_prn.py's training step, FAAL.py's weight problem),
for two SGD steps on the fixed batch of tools/make_method_twins.py, so that tests/test_fair_faal_train.cpp can
compare the loss, the per-sample terms, the class weights, the gradient of every parameter at the first step and the
weights and BN running statistics after each step.

The class weights are solved here by a route of their own: the Lagrange dual of
    max_p sum_k c_k p_k   s.t.  sum_k p_k = 1,  (1/K) sum_k log(1/(K p_k)) <= r
minimised over lambda in closed form, lambda*(mu) = exp(-r) * geomean_k(mu - c_k), leaves the convex
h(mu) = mu - lambda*(mu) on mu > max_k c_k; its stationary point (bisection on h'(mu), to the last bit) gives
p_k = lambda* / (K (mu - c_k)). (The C++ solver instead bisects on the KL radius along the primal path.)

Not part of the build or the tests; needs Debian's python3-torch and python3-numpy:
    /usr/bin/python3 tools/make_faal_twin.py

Cases (same net, batch, attack settings, SGD and Rng seed as make_method_twins.py; labels 0,1,2,0,1,2,1,0 give the
classes 3, 3 and 2 samples, so the batch counts matter):
  faal         PGD-5 CE from a uniform start in eval mode; loss K p_y / B * CE(f(x')); r = 0.5; c_k = n_k l_k;
               a no-grad train-mode forward on the clean batch after the one on x' (BN running statistics)
  faal_class   the same with c_k = l_k (every class counted once) and r = 2
  faal_trades  TRADES' KL ascent from x + 0.001 N(0, I) in eval mode; loss K p_y / B * (CE(f(x)) + 6 KL(p(x)||p(x')));
               r = 0.5, c_k = n_k l_k
"""
import math
import os
import sys
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_method_twins import (ALPHA, EPS, LR, MOMENTUM, SEED, STEPS, WD, B, C, CLASSES, S, PyRng, f64,  # noqa: E402
                               initial_state, make_net, noisy_start, pgd, trades_adv, uniform_start)
from safetensors_writer import safetensors_bytes  # noqa: E402

SGD_STEPS = 2


def dro_weights(c, r):
    """argmax of c.p over the simplex with KL(u || p) <= r, through the dual in mu (see the docstring)."""
    c = [float(v) for v in c]
    k = len(c)
    if r == 0 or max(c) == min(c):
        return [1.0 / k] * k
    top = max(c)

    def slope(mu):   # h'(mu) = 1 - exp(-r) * geomean(mu - c) * mean(1 / (mu - c))
        gaps = [mu - v for v in c]
        geo = math.exp(sum(math.log(g) for g in gaps) / k)
        return 1 - math.exp(-r) * geo * sum(1 / g for g in gaps) / k

    lo, hi = top, top + 1.0
    while slope(hi) <= 0:
        hi = top + 2 * (hi - top)
    for _ in range(400):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if mid == top or slope(mid) < 0:
            lo = mid
        else:
            hi = mid
    mu = 0.5 * (lo + hi)
    lam = math.exp(-r) * math.exp(sum(math.log(mu - v) for v in c) / k)
    p = [lam / (k * (mu - v)) for v in c]
    total = sum(p)
    return [v / total for v in p]


def class_weights(z, y, r, counts_on):
    """ft_prn.py: the class mean of max_{j != y} softmax_j - softmax_y (-1 for an absent class), c = n * l."""
    prob = F.softmax(z.detach(), dim=1)
    true = prob.gather(1, y.view(-1, 1)).squeeze(1)
    others = prob.clone()
    others[torch.arange(len(y)), y] = -1
    margin = others.max(1).values - true
    c, lbar = [], []
    for k in range(CLASSES):
        mask = y == k
        n = int(mask.sum())
        m = float(margin[mask].mean()) if n else -1.0
        lbar.append(m)
        c.append(n * m if counts_on else m)
    p = dro_weights(c, r)
    return torch.tensor([CLASSES * v for v in p], dtype=torch.float64)


def case_step(name, model, x32, x, y, rng):
    n = x.shape[0]
    eps = torch.full((n,), float(EPS), dtype=torch.float64)
    r = 2.0 if name == 'faal_class' else 0.5
    if name in ('faal', 'faal_class'):
        start = f64(uniform_start(x32, [EPS] * n, rng))
        xa = pgd(model, x, y, start, eps, float(ALPHA), STEPS, train=False)
        model.train()
        z = model(xa)
        with torch.no_grad():
            model(x)   # the code's output_clean: unused by the AT loss, seen by BN's running statistics
        w = class_weights(z, y, r, name == 'faal')
        per = F.cross_entropy(z, y, reduction='none') * w[y] / n
        return per, z, w
    if name == 'faal_trades':
        start = f64(noisy_start(x32, 0.001, rng))
        xa = trades_adv(model, x, start, eps, float(ALPHA), STEPS)
        model.train()
        z = model(xa)
        nat = model(x)
        w = class_weights(z, y, r, True)
        kl = F.kl_div(F.log_softmax(z, dim=1), F.softmax(nat, dim=1), reduction='none').sum(1)
        per = (F.cross_entropy(nat, y, reduction='none') + 6.0 * kl) * w[y] / n
        return per, z, w
    raise ValueError(name)


CASES = ['faal', 'faal_class', 'faal_trades']


def run_case(name, state, x32, y):
    model = make_net().double()
    model.load_state_dict(state)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WD)
    rng = PyRng(SEED)
    x = f64(x32)
    out, losses = {}, []
    for step in range(SGD_STEPS):
        opt.zero_grad()
        per, z, w = case_step(name, model, x32, x, y, rng)
        loss = per.sum()
        loss.backward()
        if step == 0:
            for k, p in model.named_parameters():
                out[f'{name}.grad0.{k}'] = p.grad.detach().clone()
        opt.step()
        losses.append(loss.item())
        out[f'{name}.per_sample{step}'] = per.detach()
        out[f'{name}.logits{step}'] = z.detach()
        out[f'{name}.weight{step}'] = w
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
        print(f'{name:12s} losses {out[name + ".loss"].tolist()} weights {out[name + ".weight0"].tolist()}')
    metadata = {'torch': torch.__version__, 'cases': ','.join(CASES), 'script': 'tools/make_faal_twin.py'}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'faal_twin.safetensors')
    data = safetensors_bytes(tensors, metadata)
    with open(path, 'wb') as f:
        f.write(data)
    print(f'wrote {os.path.normpath(path)} ({len(data)} bytes)')


if __name__ == '__main__':
    main()
