#!/usr/bin/python3
"""Writes tests/fixtures/golden_models.safetensors: every architecture of the model zoo (nn/model_registry.cpp)
run by its PyTorch twin (tools/pytorch_models.py) on weights and inputs that tests/golden_weights.h computes
bit for bit the same way, so the fixture holds outputs only (no weights: WRN-34-10 alone has 46M parameters).

Not part of the build or the tests; needs Debian's python3-torch and python3-numpy:
    /usr/bin/python3 tools/make_golden_models.py

Counter-based fill (no transcendental functions, so both sides agree exactly):
  h(name)     = FNV-1a 64 of the UTF-8 bytes of the state_dict name ("input" and "loss_weights" for the others)
  z(name, i)  = splitmix64 finaliser of (h(name) + i * 0x9E3779B97F4A7C15) mod 2^64, i = flat element index
  u(name, i)  = (z >> 40) / 2^23 - 1, in [-1, 1) on a 2^-23 grid (exact in float32)
  value       = float32(double(u) * scale + shift), per tensor:
    rank >= 2 (conv, linear weight)       scale sqrt(6 / fan_in)  (He-uniform: variance 2 / fan_in)
    *.bias, *.running_mean                scale 0.1
    rank-1 *.weight (BN gamma)            1 + 0.2 u
    *.running_var                         1 + 0.5 u               (in [0.5, 1.5))
    *.num_batches_tracked                 0
  input x [2, C, H, W]                    (u + 1) / 2             (in [0, 1))
  loss  L = sum(logits * W), W [2, classes] = u("loss_weights", .): dL/dlogits is W whatever the logits, so
        the input gradient tests the backward pass without softmax saturation.
Records per architecture, computed in float64 from those float32 values (PyTorch's own float32 CPU run is
off by up to 7e-3 of the gradient's scale on ResNet-50, WRN and GoogLeNet; the script prints its error):
eval-mode logits, dL/dx in eval mode, and for models with BatchNorm the train-mode logits (batch statistics;
no dropout-bearing model has BN). Metadata: geometry, torch version, the sum of squares of all floating-point
state (a checksum that tells a wrong fill from a wrong forward) and PyTorch float32's error per output.
The input gradient jumps where a ReLU input sits within float32 rounding of 0: DenseNet-121's sample 0 has one
at 2.6e-8 of its layer's largest |input| (first dense block, row 30, column 20), and float32 puts it on the
other side, moving 99 gradient elements around it by up to 2.4e-3 of the gradient's scale; GoogLeNet and
DenseNet-169 have the like. tests/test_golden_models.cpp says how it judges those three.
"""
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_models import KEY_FIXTURES, make  # noqa: E402
from safetensors_writer import safetensors_bytes  # noqa: E402

BATCH = 2
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def fnv1a64(name):
    h = 0xcbf29ce484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def uniform(name, n):
    with np.errstate(over='ignore'):
        x = np.arange(n, dtype=np.uint64) * GOLDEN + np.uint64(fnv1a64(name))
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(40)).astype(np.float64) / float(1 << 23) - 1.0


def fill_value(name, shape):
    n = int(np.prod(shape)) if shape else 1
    u = uniform(name, n)
    if len(shape) >= 2:
        v = u * np.sqrt(6.0 / (n // shape[0]))
    elif name.endswith('.bias') or name.endswith('.running_mean'):
        v = u * 0.1
    elif name.endswith('.running_var'):
        v = u * 0.5 + 1.0
    elif name.endswith('.weight'):
        v = u * 0.2 + 1.0
    else:
        raise ValueError(f'no fill rule for {name} {shape}')
    return torch.from_numpy(v.astype(np.float32).reshape(shape))


def fill_model(model):
    state, sumsq = {}, 0.0
    for name, t in model.state_dict().items():
        if name.endswith('num_batches_tracked'):
            state[name] = torch.zeros_like(t)
            continue
        state[name] = fill_value(name, list(t.shape))
        sumsq += float((state[name].double() ** 2).sum())
    model.load_state_dict(state)
    return sumsq


def run(arch, classes, channels, size, dtype):
    """The recorded outputs of one architecture, computed in `dtype` from the float32 weights and inputs."""
    model = make(arch, classes, channels, size)
    sumsq = fill_model(model)
    model = model.to(dtype)
    x = torch.from_numpy(((uniform('input', BATCH * channels * size * size) + 1.0) / 2.0).astype(np.float32))
    x = x.reshape(BATCH, channels, size, size).to(dtype).requires_grad_(True)
    w = torch.from_numpy(uniform('loss_weights', BATCH * classes).astype(np.float32)).reshape(BATCH, classes)
    model.eval()
    logits = model(x)
    (logits * w.to(dtype)).sum().backward()
    out = {'logits_eval': logits.detach(), 'input_grad_eval': x.grad, 'sumsq': sumsq}
    if any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules()):
        model.train()
        with torch.no_grad():
            out['logits_train'] = model(x)
    return out


def relative_error(got, want):
    return ((got.double() - want).abs().max() / want.abs().max()).item()


def main():
    torch.set_num_threads(2)
    tensors, metadata = {}, {'torch': torch.__version__, 'writer': 'tools/make_golden_models.py'}
    for arch, (classes, channels, size) in KEY_FIXTURES.items():
        start = time.time()
        runs = {dtype: run(arch, classes, channels, size, dtype) for dtype in (torch.float64, torch.float32)}
        exact, single = runs[torch.float64], runs[torch.float32]
        scalars = ('sumsq',)
        for key, value in exact.items():
            if key not in scalars:
                tensors[f'{arch}.{key}'] = value.float()
        errors = {key: relative_error(single[key], exact[key]) for key in exact if key not in scalars}
        metadata[f'{arch}.geometry'] = f'{classes},{channels},{size}'
        metadata[f'{arch}.state_sum_of_squares'] = '%.17g' % exact['sumsq']
        for key, e in errors.items():
            metadata[f'{arch}.torch_float32_error.{key}'] = '%.3e' % e
        print(f'{arch:16s} {time.time() - start:6.1f} s  max|logit| {exact["logits_eval"].abs().max().item():.4g}  '
              f'max|grad| {exact["input_grad_eval"].abs().max().item():.4g}  torch float32 vs float64: ' +
              ', '.join(f'{k} {e:.2e}' for k, e in errors.items()), flush=True)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures',
                       'golden_models.safetensors')
    data = safetensors_bytes(tensors, metadata)
    with open(out, 'wb') as f:
        f.write(data)
    print('wrote', os.path.normpath(out), len(data), 'bytes')


if __name__ == '__main__':
    main()
