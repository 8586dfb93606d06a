#!/usr/bin/python3
"""Writes tests/fixtures/apgd_reference.safetensors: an APGD-CE (L-inf) trajectory computed independently of the
C++ code, in float64 NumPy, following the official AutoAttack algorithm (fra31/auto-attack,
autopgd_base.py APGDAttack.attack_single_run) on a tiny ReLU network, so that tests/test_attacks_apgd_reference.cpp
can compare the engine's APGD step by step: the objective after every iteration and the step size after every
iteration's check (the halving and both of its conditions), and the final best adversarial points.

Not part of the build or the tests; needs Debian's python3-numpy:
    /usr/bin/python3 tools/make_apgd_reference.py

Setting (the test reads everything from the fixture):
  net     flatten, fc 4->16, ReLU, fc 16->3 (random weights, SEED below); input [8, 1, 2, 2]
  attack  APGD-CE, L-inf, eps 0.1, 100 iterations, rho 0.75, one run from a given start x0 (float32, stored)
The algorithm, as the official code runs it:
  eta = 2 eps; x_1 = P(x0 + eta sign g0) at i = 0, then with momentum a = 0.75:
  z = P(x_i + eta sign g_i), x_{i+1} = P(x_i + a (z - x_i) + (1 - a)(x_i - x_{i-1}));
  best point / its gradient / best loss where the loss strictly improves; at the checkpoints (first after
  max(0.22 N, 1) iterations, then shrinking by max(0.03 N, 1) to max(0.06 N, 1)):
    cond1: #{j in the last k: L_j > L_{j-1}} <= rho k  (loss row -1 wraps to the last, still-zero row)
    cond2: not reduced at the last check and best loss now <= best loss at the last check
  reduce where cond1 or cond2: eta /= 2, restart from the best point and its gradient.
Every sample runs on its own, so the 8 samples are picked from 4,000 random candidates: half of them reduce at
some check on cond2 alone (which cond1 does not cover), and no decision of any kept sample (a gradient sign, a
ReLU kink, a loss comparison, a misclassification) lies within 1e-4 of flipping, far beyond float32 noise.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_writer import safetensors_bytes  # noqa: E402

N, SIDE, H, C = 8, 2, 16, 3
D = SIDE * SIDE
EPS = np.float32(0.1)
N_ITER = 100
RHO = 0.75
MARGIN = 1e-4   # smallest |decision quantity| accepted (float32 runs carry ~1e-6 relative noise)
SEED, POOL = 1, 4000   # the network's seed; candidate samples drawn, of which N are kept


def forward(params, x):
    w1, b1, w2, b2 = params
    h_pre = x.reshape(len(x), -1) @ w1.T + b1
    h = np.maximum(h_pre, 0)
    return h @ w2.T + b2, h_pre


def ce_and_grad(params, x, y):
    """Per-sample cross-entropy and the gradient of their sum with respect to x."""
    w1, b1, w2, b2 = params
    z, h_pre = forward(params, x)
    z = z - z.max(1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    loss = -np.log(p[np.arange(len(y)), y])
    dz = p.copy()
    dz[np.arange(len(y)), y] -= 1
    dh = (dz @ w2) * (h_pre > 0)
    return loss, (dh @ w1).reshape(x.shape), z.argmax(1), h_pre, dz


def project(v, x, eps):
    return np.clip(np.minimum(np.maximum(v, x - eps), x + eps), 0.0, 1.0)


def nonzero_min(a):
    """Per row, the smallest |a| among its nonzero entries (1 where none)."""
    a = np.abs(a.reshape(len(a), -1))
    return np.where(a > 0, a, np.inf).min(1).clip(max=1.0)


def apgd(params, x, y, x0, eps, n_iter, rho):
    """The official attack_single_run (L-inf, CE), instrumented. Every sample runs on its own (all decisions are
    per sample), so with the trace it returns, per sample, the smallest margin of any decision it took and how
    many of its reductions came from cond2 alone."""
    margin = np.ones(len(x))

    def note(m):
        np.minimum(margin, m, out=margin)

    def evaluate(xa):
        loss, grad, pred, h_pre, _ = ce_and_grad(params, xa, y)
        note(nonzero_min(grad))                    # a gradient sign
        note(np.abs(h_pre).min(1))                 # a ReLU unit on its kink
        zs = np.sort(forward(params, xa)[0], 1)
        note(zs[:, -1] - zs[:, -2])                # a tie for the argmax
        return loss, grad, pred

    n_iter_2, n_iter_min, size_decr = max(int(0.22 * n_iter), 1), max(int(0.06 * n_iter), 1), max(int(0.03 * n_iter), 1)
    x_adv = x0.copy()
    x_best, x_best_adv = x_adv.copy(), x_adv.copy()
    loss_steps = np.zeros((n_iter, len(x)))
    loss_indiv, grad, pred = evaluate(x_adv)
    grad_best = grad.copy()
    acc = pred == y
    loss_best = loss_indiv.copy()
    step = 2.0 * eps * np.ones((len(x), 1, 1, 1))
    x_adv_old = x_adv.copy()
    counter3, k = 0, n_iter_2
    loss_best_last_check = loss_best.copy()
    reduced_last_check = np.ones(len(x))
    eta_trace, cond2_only = [], np.zeros(len(x), int)
    for i in range(n_iter):
        grad2 = x_adv - x_adv_old
        x_adv_old = x_adv.copy()
        a = 0.75 if i > 0 else 1.0
        x1 = project(x_adv + step * np.sign(grad), x, eps)
        x1 = project(x_adv + (x1 - x_adv) * a + grad2 * (1 - a), x, eps)
        x_adv = x1
        loss_indiv, grad, pred = evaluate(x_adv)
        acc = np.minimum(acc, pred == y)
        x_best_adv[pred != y] = x_adv[pred != y]
        loss_steps[i] = loss_indiv
        note(nonzero_min((loss_indiv - loss_best)[:, None]))   # a new best or not
        ind = loss_indiv > loss_best
        x_best[ind], grad_best[ind], loss_best[ind] = x_adv[ind], grad[ind], loss_indiv[ind]
        counter3 += 1
        if counter3 == k:
            incr = np.zeros(len(x))
            for c in range(k):
                d = loss_steps[i - c] - loss_steps[i - c - 1]
                note(nonzero_min(d[:, None]))              # an increase or not
                incr += d > 0
            cond1 = incr <= k * rho
            cond2 = (reduced_last_check == 0) & (loss_best_last_check >= loss_best)
            cond2_only += cond2 & ~cond1
            reduce = cond1 | cond2
            reduced_last_check = reduce.astype(float)
            loss_best_last_check = loss_best.copy()
            step[reduce] /= 2.0
            x_adv[reduce] = x_best[reduce]
            grad[reduce] = grad_best[reduce]
            k = max(k - size_decr, n_iter_min)
            counter3 = 0
        eta_trace.append(step.reshape(-1).copy())
    trace = {'loss': loss_steps, 'eta': np.array(eta_trace), 'x_best_adv': x_best_adv, 'robust': acc.astype(float)}
    return trace, margin, cond2_only


def candidates(seed, count):
    """A fixed random network and `count` random samples with their official random starts."""
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0, 1.5, (H, D)).astype(np.float32)
    b1 = rng.normal(0, 0.3, H).astype(np.float32)
    w2 = rng.normal(0, 1.5, (C, H)).astype(np.float32)
    b2 = rng.normal(0, 0.3, C).astype(np.float32)
    x = rng.uniform(0, 1, (count, 1, SIDE, SIDE)).astype(np.float32)
    y = rng.integers(0, C, count)
    t = rng.uniform(-1, 1, x.shape)
    t = t / np.abs(t.reshape(count, -1)).max(1).reshape(count, 1, 1, 1)
    x0 = np.clip(x + float(EPS) * t, 0, 1).astype(np.float32)   # the official start, stored in float32
    return (w1, b1, w2, b2), x, y, x0


def run(params32, x, y, x0):
    params = tuple(p.astype(np.float64) for p in params32)
    return apgd(params, x.astype(np.float64), y, x0.astype(np.float64), float(EPS), N_ITER, RHO)


def main():
    params32, x, y, x0 = candidates(SEED, POOL)
    _, margin, cond2_only = run(params32, x, y, x0)
    safe = margin > MARGIN
    # N samples whose every decision is safe: half with reductions on cond2 alone, half without.
    with_c2 = np.flatnonzero(safe & (cond2_only > 0))[:N // 2]
    without = np.flatnonzero(safe & (cond2_only == 0))[:N - len(with_c2)]
    pick = np.sort(np.concatenate([with_c2, without]))
    assert len(with_c2) >= 2, f'only {len(with_c2)} safe samples reduce on cond2 alone'
    x, y, x0 = x[pick], y[pick], x0[pick]
    trace, margin, cond2_only = run(params32, x, y, x0)   # the chosen samples alone: the same trajectories
    halvings = int((np.diff(np.log2(trace['eta']), axis=0) != 0).sum())
    print(f'{len(pick)} of {POOL} candidates: {int(cond2_only.sum())} reductions on cond2 alone, {halvings} halvings '
          f'after the first iteration, smallest margin {margin.min():.2e}, robust {int(trace["robust"].sum())}')
    w1, b1, w2, b2 = params32
    tensors = {'fc1.weight': w1, 'fc1.bias': b1, 'fc2.weight': w2, 'fc2.bias': b2, 'x': x,
               'y': y.astype(np.float32), 'x0': x0, 'eps': np.array([EPS], np.float32),
               'loss': trace['loss'], 'eta': trace['eta'], 'x_best_adv': trace['x_best_adv'],
               'robust': trace['robust'], 'cond2_only': cond2_only.astype(np.float32)}
    metadata = {'script': 'tools/make_apgd_reference.py', 'seed': str(SEED), 'n_iter': str(N_ITER),
                'rho': str(RHO), 'samples': ','.join(str(i) for i in pick)}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures',
                        'apgd_reference.safetensors')
    with open(path, 'wb') as f:
        f.write(safetensors_bytes({k: np.asarray(v) for k, v in tensors.items()}, metadata))
    print('wrote', os.path.normpath(path))


if __name__ == '__main__':
    main()
