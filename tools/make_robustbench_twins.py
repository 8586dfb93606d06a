#!/usr/bin/python3
"""Writes the RobustBench twins of tests/fixtures/robustbench/: one small PyTorch model per converted family
(tools/robustbench_models.py, written after RobustBench's definitions), briefly trained on CIFAR-10, saved in a
RobustBench checkpoint layout, converted by tools/convert_robustbench.py, with PyTorch's float64 answers that
tests/test_robustbench_twins.cpp compares classwise's against: the logits and the input gradient of the summed
cross-entropy on the first 2 of 8 fixed images and the logits of all 8, and the logits of the first 200 CIFAR-10 test images (the per-class predictions).

Not part of the build; needs Debian's python3-torch and the CIFAR-10 binary files:
    /usr/bin/python3 tools/make_robustbench_twins.py DATA_DIR/cifar-10-batches-bin
        writes tests/fixtures/robustbench/<twin>.safetensors (converted, trained) and references.safetensors
    /usr/bin/python3 tools/make_robustbench_twins.py --random-init OUT_DIR
        writes, for every twin at random initialisation, OUT_DIR/<twin>.pt (the RobustBench layout),
        OUT_DIR/<twin>.safetensors (converted) and OUT_DIR/references.safetensors (no CIFAR-10 images needed):
        what the suite runs when PyTorch is installed.

The twins are the leaderboard's families at reduced depth or width where the code path is the same (depth 10 keeps
both WideResNet block kinds at widen factor 1: a 16 -> 16 block without shortcut and two with one), and each is
saved in another of the layouts RobustBench's checkpoints come in.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import convert_robustbench as conv  # noqa: E402
import robustbench_models as rm  # noqa: E402
from safetensors_writer import safetensors_bytes  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests', 'fixtures', 'robustbench')
CIFAR_MEAN, CIFAR_STD = conv.CIFAR10
GRAD_IMAGES = 2
ENGSTROM = ((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010))

# name: (arch, build options, converter options, layout)
#   layout: 'wrapped'   {'state_dict': {'module.' + key}} without num_batches_tracked (TRADES / Carmon et al.)
#           'plain'     the state dict itself (the DeepMind checkpoints)
#           'module'    the state dict with DataParallel's 'module.' prefix
#           'msd'       {'model_state_dict': ...}
# Normalisation: 'saved' puts mu/sigma in the state dict (RobustBench's wrappers), 'built-in' is the DeepMind models'.
TWINS = {
    'wrn10_1': ('wrn10_1', dict(sub_block1=True, mean=CIFAR_MEAN, std=CIFAR_STD),
                dict(sub_block1=True), 'wrapped'),
    'dm_wrn10_1_silu': ('dm_wrn10_1', dict(activation='silu', mean=CIFAR_MEAN, std=CIFAR_STD),
                        dict(activation='silu', normalize='cifar10'), 'plain'),
    'dm_preact_resnet18_w2_silu': ('dm_preact_resnet18', dict(activation='silu', mean=CIFAR_MEAN, std=CIFAR_STD, base_width=2),
                                   dict(activation='silu', normalize='cifar10', base_width=2), 'module'),
    'preact_resnet18_w2': ('preact_resnet18', dict(mean=CIFAR_MEAN, std=CIFAR_STD, base_width=2, preact=True),
                           dict(preact=True, base_width=2), 'msd'),
    'resnet18_w2': ('resnet18', dict(base_width=2), dict(base_width=2), 'plain'),
    'resnet50_w2': ('resnet50', dict(mean=ENGSTROM[0], std=ENGSTROM[1], base_width=2), dict(base_width=2), 'wrapped'),
    # A CIFAR-100 entry (100 logits, CIFAR-100's mean and std built in) and the DeepMind WideResNet with ReLU, as
    # RobustBench's CIFAR-100 DM models without Swish are; briefly trained on CIFAR-10 images (classes 0-9 of 100).
    'dm_wrn10_1_relu_c100': ('dm_wrn10_1', dict(activation='relu', mean=conv.CIFAR100[0], std=conv.CIFAR100[1],
                                                num_classes=100, dataset='cifar100'),
                             dict(activation='relu', normalize='cifar100'), 'plain'),
}


def robustbench_layout(model, layout):
    sd = {k.replace('normalize.', ''): v.clone() for k, v in model.state_dict().items()}  # mu, sigma at the top
    if layout == 'wrapped':
        return {'state_dict': {'module.' + k: v for k, v in sd.items() if not k.endswith('num_batches_tracked')},
                'epoch': 3}
    if layout == 'module':
        return {'module.' + k: v for k, v in sd.items()}
    if layout == 'msd':
        return {'model_state_dict': sd, 'optimizer_state_dict': {}}
    return sd


def read_cifar(path, n):
    raw = open(path, 'rb').read(n * 3073)
    t = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(n, 3073)
    return t[:, 1:].view(n, 3, 32, 32).float() / 255, t[:, 0].long()


def briefly_train(model, images, labels, steps=40, batch=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    for _ in range(steps):
        idx = torch.randint(0, len(images), (batch,), generator=g)
        loss = F.cross_entropy(model(images[idx]), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


def fixed_batch():
    g = torch.Generator().manual_seed(56)
    return torch.rand(8, 3, 32, 32, generator=g), torch.tensor([0, 1, 2, 3, 4, 5, 6, 7])


def references(name, model, x, y, test_images):
    m64 = model.double().eval()
    with torch.no_grad():
        logits = m64(x.double())
    xd = x[:GRAD_IMAGES].double().requires_grad_(True)   # the gradient of two images keeps the fixture small
    F.cross_entropy(m64(xd), y[:GRAD_IMAGES], reduction='sum').backward()
    out = {name + '.logits': logits, name + '.input_grad': xd.grad.detach()}
    if test_images is not None:
        with torch.no_grad():
            out[name + '.cifar_logits'] = m64(test_images.double())
    model.float()
    return out


def make(out_dir, data_dir):
    os.makedirs(out_dir, exist_ok=True)
    x, y = fixed_batch()
    refs = {'inputs': x, 'labels': y.double()}
    train = test = None
    if data_dir:
        train = read_cifar(os.path.join(data_dir, 'data_batch_1.bin'), 10000)
        test = read_cifar(os.path.join(data_dir, 'test.bin'), 200)[0]
    for i, (name, (arch, build, options, layout)) in enumerate(TWINS.items()):
        torch.manual_seed(100 + i)
        model = rm.build(arch, build.get('num_classes', 10), build.get('activation', 'relu'), build.get('mean'), build.get('std'),
                         build.get('base_width', 0), build.get('sub_block1', False), preact=build.get('preact', False))
        if train is not None:
            briefly_train(model, *train, seed=i)
        model.eval()
        pt = os.path.join(out_dir, name + '.pt')
        torch.save(robustbench_layout(model, layout), pt)
        conv.convert(pt, os.path.join(out_dir, name + '.safetensors'), arch, options, build.get('dataset', 'cifar10'), 'Linf',
                     source='twin ' + name)
        if data_dir:
            os.remove(pt)   # the committed fixture is the converted file; the suite converts random-init .pt files
        refs.update(references(name, model, x, y, test))
        print(name, 'done', flush=True)
    with open(os.path.join(out_dir, 'references.safetensors'), 'wb') as f:
        f.write(safetensors_bytes(refs, {'script': 'tools/make_robustbench_twins.py',
                                         'torch': torch.__version__, 'trained': 'true' if data_dir else 'false'}))


if __name__ == '__main__':
    torch.set_num_threads(2)
    if len(sys.argv) == 3 and sys.argv[1] == '--random-init':
        make(sys.argv[2], None)
    elif len(sys.argv) == 2:
        make(OUT, sys.argv[1])
    else:
        sys.exit(__doc__)
