#!/usr/bin/python3
"""Writes tests/fixtures/dafa_trix_twins.safetensors: one training step of DAFA and of TRIX
(fairness/methods/dafa.h, trix.h; docs/protocols/dafa.md, trix.md) by an independent PyTorch twin written from
the protocol pages and the authors' codes (DAFA's losses.py trades_loss and utils.py calculate_class_weights,
TRIX's losses.py mixed_trades_loss), for tests/test_fair_dafa_twins.cpp to compare: the per-sample loss terms,
the batch loss, the logits trained on, every parameter's gradient and BN's running statistics after the outer
forwards (both codes forward x' first, then x: the order decides what the running statistics hold); for TRIX also
which samples were attacked targeted and toward which class.

Not part of the build or the tests; needs Debian's python3-torch and python3-numpy:
    /usr/bin/python3 tools/make_dafa_trix_twins.py

Setting: the net, batch, initial weights, eps 8/255, alpha 2/255 and K = 5 of tools/make_method_twins.py (imported
from it). The warm-up is one epoch (tau = 1): both methods record the probability rows WARMUP_PROBS below as the
last warm-up epoch's adversarial probabilities of the batch's labels, so the class weights are W = DAFA_comp(P)
with lambda 1; then one step of epoch 1 (0-based) with the weighted radius, step and clean CE. beta 6.
Randomness: the TRADES start x + 0.001 N(0, I) and TRIX's uniform targets come from classwise's Rng (seed 1234),
replayed by PyRng in the order the C++ methods draw (the noise first, then one draw per targeted sample).
Everything else runs in float64 from the float32 inputs, weights and starts.
"""
import os
import sys
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_method_twins import (ALPHA, CLASSES, EPS, MASK, SEED, STEPS, B, C, PyRng, S,  # noqa: E402
                               f64, initial_state, input_grad, make_net, noisy_start, project)
from safetensors_writer import safetensors_bytes  # noqa: E402

BETA = 6.0
# Y of make_method_twins: [0, 1, 2, 0, 1, 2, 1, 0]; one probability row per sample, so P[0] is the mean of rows
# 0, 3, 7, P[1] of rows 1, 4, 6, P[2] of rows 2, 5.
WARMUP_PROBS = np.array([[0.5, 0.3, 0.2], [0.1, 0.8, 0.1], [0.2, 0.1, 0.7], [0.7, 0.2, 0.1],
                         [0.2, 0.6, 0.2], [0.1, 0.1, 0.8], [0.3, 0.6, 0.1], [0.6, 0.3, 0.1]], dtype=np.float32)


def below(rng, n):
    """engine/rng.cpp Rng::below: rejection sampling, then r % n."""
    limit = MASK - MASK % n
    while True:
        r = rng.next_u64()
        if r < limit:
            return r % n


def similarity(probs, labels, num_classes):
    p = np.zeros((num_classes, num_classes))
    for i in range(num_classes):
        rows = np.where(labels == i)[0]
        if len(rows):
            p[i] = probs[rows].astype(np.float64).mean(axis=0)
    return p


def dafa_comp(p, lam=1.0):
    """DAFA_comp with the code's tie rule (its else branch)."""
    n = p.shape[0]
    w = np.ones(n)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            if p[i, i] < p[j, j]:
                w[i] += lam * p[i, j] * p[j, j]
            else:
                w[i] -= lam * p[j, i] * p[i, i]
    return w


def trades_adv(model, x, start, eps, alpha, steps):
    model.eval()
    with torch.no_grad():
        clean = F.softmax(model(x), dim=1)
    xa = start
    for _ in range(steps):
        g = input_grad(model, xa, lambda z: F.kl_div(F.log_softmax(z, dim=1), clean, reduction='sum'))
        xa = project(xa + alpha.view(-1, 1, 1, 1) * g.sign(), x, eps)
    return xa.detach()


def mixed_adv(model, x, start, eps, alpha, targeted, goal, steps):
    """TRIX: -sign grad CE(., t) for the targeted samples, +sign grad KL(p(x) || p(.)) for the others."""
    model.eval()
    with torch.no_grad():
        clean = F.softmax(model(x), dim=1)
    xa = start
    for _ in range(steps):
        xg = xa.detach().requires_grad_(True)
        z = model(xg)
        kl = (clean * (clean.log() - F.log_softmax(z, dim=1))).sum(1)
        ce = F.cross_entropy(z, goal, reduction='none')
        g, = torch.autograd.grad((targeted * ce + (1 - targeted) * kl).sum(), xg)
        direction = -g.sign() * targeted.view(-1, 1, 1, 1) + g.sign() * (1 - targeted).view(-1, 1, 1, 1)
        xa = project(xa + alpha.view(-1, 1, 1, 1) * direction, x, eps)
    return xa.detach()


def outer_terms(model, x, xa, y, w):
    model.train()
    adv = model(xa)   # the codes' order: logits = model(x_adv), then logits_nat = model(x_natural)
    nat = model(x)
    ce = F.cross_entropy(nat, y, reduction='none')
    kl = F.kl_div(F.log_softmax(adv, dim=1), F.softmax(nat, dim=1), reduction='none').sum(1)
    return (w * ce + BETA * kl) / len(y), adv


def run_case(name, state, x32, y, weights):
    model = make_net().double()
    model.load_state_dict(state)
    rng = PyRng(SEED)
    x = f64(x32)
    yl = y.tolist()
    w = torch.tensor([weights[c] for c in yl], dtype=torch.float64)
    # float32 per-class radius and step, as the C++ computes them: float(max(W, 0)) * eps
    scale = [np.float32(max(weights[c], 0.0)) for c in yl]
    eps = torch.tensor([float(s * EPS) for s in scale], dtype=torch.float64)
    alpha = torch.tensor([float(s * ALPHA) for s in scale], dtype=torch.float64)
    start = f64(noisy_start(x32, 0.001, rng))
    out = {}
    if name == 'dafa':
        xa = trades_adv(model, x, start, eps, alpha, STEPS)
    else:
        model.eval()
        with torch.no_grad():
            probs = F.softmax(model(x), dim=1).numpy()
        sim = similarity(probs, np.array(yl), CLASSES) + 1e-8 * np.eye(CLASSES)
        bw = dafa_comp(sim, 1.0)
        sample_w = np.array([bw[c] for c in yl])
        split = sample_w < sample_w.mean()
        margin = np.min(np.abs(sample_w - sample_w.mean()))
        print(f'trix: batch weights {bw}, targeted {split.astype(int).tolist()}, closest to the mean by {margin:.3g}')
        targets = []
        for n in range(B):
            if split[n]:
                t = below(rng, CLASSES - 1)
                targets.append(t + 1 if t >= yl[n] else t)
            else:
                targets.append(-1)
        targeted = torch.tensor(split.astype(np.float64))
        goal = torch.tensor([t if t >= 0 else yl[n] for n, t in enumerate(targets)])
        xa = mixed_adv(model, x, start, eps, alpha, targeted, goal, STEPS)
        out[name + '.targets'] = torch.tensor(targets, dtype=torch.float64)
    model.zero_grad()
    per, z = outer_terms(model, x, xa, y, w)
    loss = per.sum()
    loss.backward()
    out[name + '.loss'] = torch.tensor([loss.item()], dtype=torch.float64)
    out[name + '.per_sample'] = per.detach()
    out[name + '.logits'] = z.detach()
    for k, p in model.named_parameters():
        out[f'{name}.grad.{k}'] = p.grad.detach().clone()
    for k, v in model.named_buffers():
        if 'running' in k:
            out[f'{name}.buffer.{k}'] = v.detach().clone()
    print(f'{name:5s} loss {loss.item():.8f}')
    return out


def main():
    torch.set_num_threads(1)
    state = initial_state()
    g = torch.Generator().manual_seed(11)
    x32 = torch.rand(B, C, S, S, generator=g).numpy().astype(np.float32)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 1, 0])
    weights = dafa_comp(similarity(WARMUP_PROBS, y.numpy(), CLASSES), 1.0)
    print(f'class weights {weights.tolist()}')
    tensors = OrderedDict()
    tensors['x'] = torch.from_numpy(x32)
    tensors['y'] = y.double()
    tensors['warmup_probs'] = torch.from_numpy(WARMUP_PROBS)
    tensors['class_weights'] = torch.tensor(weights)
    for k, v in state.items():
        if not k.endswith('num_batches_tracked'):
            tensors['init.' + k] = v
    double_state = {k: v.double() if v.is_floating_point() else v for k, v in state.items()}
    for name in ('dafa', 'trix'):
        tensors.update(run_case(name, double_state, x32, y, weights))
    metadata = {'torch': torch.__version__, 'cases': 'dafa,trix', 'script': 'tools/make_dafa_trix_twins.py'}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures',
                        'dafa_trix_twins.safetensors')
    data = safetensors_bytes(tensors, metadata)
    with open(path, 'wb') as f:
        f.write(data)
    print(f'wrote {os.path.normpath(path)} ({len(data)} bytes)')


if __name__ == '__main__':
    main()
