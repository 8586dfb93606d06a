#!/usr/bin/python3
"""Writes tests/fixtures/golden_preact18.txt: PreAct ResNet-18 (Rice et al., 10 classes) computed by PyTorch with
weights and inputs from closed-form formulas that tests/test_nn_golden.cpp evaluates the same way.

Not part of the build or the tests; needs Debian's python3-torch:  /usr/bin/python3 tools/make_golden_preact.py

Formulas (k = index of the tensor in state_dict order, i = flat element index, s = sin(0.37 * i + k) in double,
rounded to float32 once at the end):
  conv weight     2 / sqrt(fan_in) * s      (He-like scale: sin has RMS 1/sqrt 2)
  linear weight   1 / sqrt(512) * s
  linear bias     0.1 * s
  BN weight       1 + 0.2 * s
  BN bias         0.1 * s
  running_mean    0.1 * s
  running_var     1 + 0.5 * s * s
  num_batches_tracked   k
  input x[n, c, h, w] = 0.5 + 0.45 * sin(0.05 * j + 0.7 * n), j = flat index within sample n
  labels = [3, 8]
Records: eval-mode logits, mean cross-entropy, its gradient w.r.t. the input; then, from the same weights, the
train-mode logits (batch statistics) and the final BN's running_var after that one train-mode forward
(PyTorch updates it with the unbiased batch variance and momentum 0.1).
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_models import PreActResNet18  # noqa: E402

BATCH, LABELS = 2, [3, 8]


def formula_tensor(name, shape, k):
    n = 1
    for d in shape:
        n *= d
    s = [math.sin(0.37 * i + k) for i in range(n)]
    if name.endswith('num_batches_tracked'):
        return torch.tensor(k, dtype=torch.long)
    if name == 'linear.weight':
        v = [1.0 / math.sqrt(shape[1]) * x for x in s]
    elif name == 'linear.bias':
        v = [0.1 * x for x in s]
    elif len(shape) == 4:
        v = [2.0 / math.sqrt(shape[1] * shape[2] * shape[3]) * x for x in s]
    elif name.endswith('running_mean') or name.endswith('.bias'):
        v = [0.1 * x for x in s]
    elif name.endswith('running_var'):
        v = [1.0 + 0.5 * x * x for x in s]
    elif name.endswith('.weight'):
        v = [1.0 + 0.2 * x for x in s]
    else:
        raise ValueError(name)
    return torch.tensor(v, dtype=torch.float64).to(torch.float32).reshape(shape)


def formula_input():
    per = 3 * 32 * 32
    v = [0.5 + 0.45 * math.sin(0.05 * j + 0.7 * n) for n in range(BATCH) for j in range(per)]
    return torch.tensor(v, dtype=torch.float64).to(torch.float32).reshape(BATCH, 3, 32, 32)


def main():
    torch.set_num_threads(2)
    model = PreActResNet18(num_classes=10)
    state = {k: formula_tensor(k, list(v.shape), idx) for idx, (k, v) in enumerate(model.state_dict().items())}
    model.load_state_dict(state)
    x = formula_input().requires_grad_(True)
    y = torch.tensor(LABELS)

    model.eval()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()

    model.train()
    with torch.no_grad():
        train_logits = model(x)
    running_var = model.bn.running_var

    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'golden_preact18.txt')
    with open(out, 'w') as f:
        f.write(f'# PreAct ResNet-18 golden values from tools/make_golden_preact.py, torch {torch.__version__}\n')
        f.write(f'# batch {BATCH}, labels {LABELS}; each line: name count values...\n')

        def put(name, t):
            vals = t.detach().reshape(-1).tolist()
            f.write(name + ' ' + str(len(vals)) + ' ' + ' '.join('%.9g' % v for v in vals) + '\n')

        put('logits_eval', logits)
        put('loss_eval', loss.reshape(1))
        put('input_grad_eval', x.grad)
        put('logits_train', train_logits)
        put('final_bn_running_var_after_train', running_var)
    print('wrote', out, 'max |logit|', logits.abs().max().item(), 'loss', loss.item(),
          'max |grad|', x.grad.abs().max().item(), 'train logits', train_logits.abs().max().item())


if __name__ == '__main__':
    main()
