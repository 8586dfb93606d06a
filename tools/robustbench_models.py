"""PyTorch definitions of the RobustBench CIFAR-10/100 model families that classwise converts
(tools/convert_robustbench.py) and audits, written after RobustBench's robustbench/model_zoo/architectures/
(dm_wide_resnet.py, wide_resnet.py, resnet.py) and its wrappers in cifar10.py / cifar100.py. The state-dict names
are the ones RobustBench's checkpoints carry; the C++ models of nn/models/ must give the same logits
(tests/test_robustbench_twins.cpp). `base_width` narrows the ResNets (64 in every leaderboard entry) for the
small test twins; the code path is the same at every width.

Each builder takes the classwise architecture name and its options and returns (model, schema), where the schema
is the model's state dict without the normalisation buffers (classwise keeps the normalisation in metadata).
"""
import re

import torch
import torch.nn as nn
import torch.nn.functional as F


def activation_module(name):
    if name == 'relu':
        return nn.ReLU()
    if name == 'silu':
        return nn.SiLU()
    raise ValueError("activation must be 'relu' or 'silu', got %r" % name)


class Normalized(nn.Module):
    """(x - mu) / sigma before the network. persistent=True is the layout of RobustBench's wrappers
    (Rice2020OverfittingNet, Engstrom2019RobustnessNet: "mu" and "sigma" in the state dict); persistent=False that
    of the DeepMind models (mean and std built in, not saved)."""

    def __init__(self, mean, std, persistent):
        super().__init__()
        self.register_buffer('mu', torch.tensor(mean).view(1, -1, 1, 1), persistent=persistent)
        self.register_buffer('sigma', torch.tensor(std).view(1, -1, 1, 1), persistent=persistent)

    def forward(self, x):
        return (x - self.mu) / self.sigma


# ---- the plain WideResNet (TRADES / RobustBench wide_resnet.py) ------------------------------------------------
class WideBasic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.bn1, self.conv1 = nn.BatchNorm2d(cin), nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2, self.conv2 = nn.BatchNorm2d(cout), nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.convShortcut = nn.Conv2d(cin, cout, 1, stride, 0, bias=False) if cin != cout else None

    def forward(self, x):
        a = F.relu(self.bn1(x))
        h = self.conv2(F.relu(self.bn2(self.conv1(a))))
        # a width change takes the shortcut from the activated input, an unchanged width from the raw one
        return h + (self.convShortcut(a) if self.convShortcut is not None else x)


class WideGroup(nn.Module):
    def __init__(self, n, cin, cout, stride):
        super().__init__()
        self.layer = nn.Sequential(*[WideBasic(cin if i == 0 else cout, cout, stride if i == 0 else 1) for i in range(n)])

    def forward(self, x):
        return self.layer(x)


class WideResNet(nn.Module):
    def __init__(self, depth, widen, num_classes, sub_block1=False, normalize=None):
        super().__init__()
        n = (depth - 4) // 6
        w = [16, 16 * widen, 32 * widen, 64 * widen]
        self.normalize = normalize
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.block1 = WideGroup(n, w[0], w[1], 1)
        if sub_block1:
            self.sub_block1 = WideGroup(n, w[0], w[1], 1)  # saved, never run
        self.block2 = WideGroup(n, w[1], w[2], 2)
        self.block3 = WideGroup(n, w[2], w[3], 2)
        self.bn1 = nn.BatchNorm2d(w[3])
        self.fc = nn.Linear(w[3], num_classes)

    def forward(self, x):
        if self.normalize is not None:
            x = self.normalize(x)
        h = self.block3(self.block2(self.block1(self.conv1(x))))
        return self.fc(F.relu(self.bn1(h)).mean((2, 3)))


# ---- the DeepMind WideResNet and PreAct ResNet (dm_wide_resnet.py) ---------------------------------------------
def same_pad(x, stride):
    """TensorFlow's SAME for a 3x3 kernel: one zero all round at stride 1, one below and right at stride 2."""
    return F.pad(x, (1, 1, 1, 1) if stride == 1 else (0, 1, 0, 1))


class DMBlock(nn.Module):
    def __init__(self, cin, cout, stride, act):
        super().__init__()
        self.stride = stride
        self.batchnorm_0, self.relu_0 = nn.BatchNorm2d(cin), activation_module(act)
        self.conv_0 = nn.Conv2d(cin, cout, 3, stride, 0, bias=False)
        self.batchnorm_1, self.relu_1 = nn.BatchNorm2d(cout), activation_module(act)
        self.conv_1 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.shortcut = nn.Conv2d(cin, cout, 1, stride, 0, bias=False) if cin != cout else None

    def forward(self, x):
        a = self.relu_0(self.batchnorm_0(x))
        h = self.conv_0(same_pad(a, self.stride))
        h = self.conv_1(self.relu_1(self.batchnorm_1(h)))
        return (self.shortcut(a) if self.shortcut is not None else x) + h


class DMGroup(nn.Module):
    def __init__(self, n, cin, cout, stride, act):
        super().__init__()
        self.block = nn.Sequential(*[DMBlock(cin if i == 0 else cout, cout, stride if i == 0 else 1, act)
                                     for i in range(n)])

    def forward(self, x):
        return self.block(x)


class DMWideResNet(nn.Module):
    def __init__(self, depth, widen, num_classes, act, mean, std):
        super().__init__()
        n = (depth - 4) // 6
        w = [16, 16 * widen, 32 * widen, 64 * widen]
        self.normalize = Normalized(mean, std, persistent=False)
        self.init_conv = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.layer = nn.Sequential(DMGroup(n, w[0], w[1], 1, act), DMGroup(n, w[1], w[2], 2, act),
                                   DMGroup(n, w[2], w[3], 2, act))
        self.batchnorm, self.relu = nn.BatchNorm2d(w[3]), activation_module(act)
        self.logits = nn.Linear(w[3], num_classes)

    def forward(self, x):
        h = self.layer(self.init_conv(self.normalize(x)))
        return self.logits(self.relu(self.batchnorm(h)).mean((2, 3)))


class DMPreActBlock(nn.Module):
    def __init__(self, cin, cout, stride, act):
        super().__init__()
        self.stride = stride
        self.batchnorm_0, self.relu_0 = nn.BatchNorm2d(cin), activation_module(act)
        self.conv_2d_1 = nn.Conv2d(cin, cout, 3, stride, 0, bias=False)
        self.batchnorm_1, self.relu_1 = nn.BatchNorm2d(cout), activation_module(act)
        self.conv_2d_2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        # a 3x3 shortcut of the raw input, where stride or width changes
        self.has_shortcut = stride != 1 or cin != cout
        if self.has_shortcut:
            self.shortcut = nn.Conv2d(cin, cout, 3, stride, 0, bias=False)

    def forward(self, x):
        a = self.relu_0(self.batchnorm_0(x))
        skip = self.shortcut(same_pad(x, self.stride)) if self.has_shortcut else x
        h = self.conv_2d_1(same_pad(a, self.stride))
        return self.conv_2d_2(self.relu_1(self.batchnorm_1(h))) + skip


class DMPreActResNet(nn.Module):
    def __init__(self, depth, num_classes, act, mean, std, base_width=64):
        super().__init__()
        blocks = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3)}[depth]
        self.normalize = Normalized(mean, std, persistent=False)
        self.conv_2d = nn.Conv2d(3, base_width, 3, 1, 1, bias=False)
        cin = base_width
        for s, n in enumerate(blocks):
            cout = base_width << s
            stage = []
            for b in range(n):
                stage.append(DMPreActBlock(cin, cout, 2 if (s > 0 and b == 0) else 1, act))
                cin = cout
            setattr(self, 'layer_%d' % s, nn.Sequential(*stage))
        self.batchnorm, self.relu = nn.BatchNorm2d(cin), activation_module(act)
        self.logits = nn.Linear(cin, num_classes)

    def forward(self, x):
        h = self.conv_2d(self.normalize(x))
        for s in range(4):
            h = getattr(self, 'layer_%d' % s)(h)
        return self.logits(self.relu(self.batchnorm(h)).mean((2, 3)))


# ---- ResNet-18/50 and PreAct ResNet-18 (resnet.py; kuangliu's pytorch-cifar) ------------------------------------
class Basic(nn.Module):
    expansion = 1

    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False), nn.BatchNorm2d(planes)
        self.conv2, self.bn2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False), nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        h = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(h + self.shortcut(x))


class Neck(nn.Module):
    expansion = 4

    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, planes, 1, bias=False), nn.BatchNorm2d(planes)
        self.conv2, self.bn2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False), nn.BatchNorm2d(planes)
        self.conv3, self.bn3 = nn.Conv2d(planes, 4 * planes, 1, bias=False), nn.BatchNorm2d(4 * planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != 4 * planes:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, 4 * planes, 1, stride, bias=False), nn.BatchNorm2d(4 * planes))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        return F.relu(self.bn3(self.conv3(h)) + self.shortcut(x))


class PreAct(nn.Module):
    expansion = 1

    def __init__(self, cin, planes, stride, from_input=True):
        super().__init__()
        self.from_input = from_input
        self.bn1, self.conv1 = nn.BatchNorm2d(cin), nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn2, self.conv2 = nn.BatchNorm2d(planes), nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        if stride != 1 or cin != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, planes, 1, stride, bias=False))

    def forward(self, x):
        a = F.relu(self.bn1(x))
        # PreActBlock (RobustBench's default) takes the shortcut from the raw input, PreActBlockV2 from the activated
        if hasattr(self, 'shortcut'):
            skip = self.shortcut(x if self.from_input else a)
        else:
            skip = x
        return self.conv2(F.relu(self.bn2(self.conv1(a)))) + skip


class ResNetFamily(nn.Module):
    """kuangliu's ResNet (post-activation, stem BN) or PreActResNet (no stem BN, no BN before the classifier)."""

    def __init__(self, block, blocks, num_classes, base_width=64, normalize=None, preact_v1=True):
        super().__init__()
        self.preact = block is PreAct
        self.normalize = normalize
        self.conv1 = nn.Conv2d(3, base_width, 3, 1, 1, bias=False)
        if not self.preact:
            self.bn1 = nn.BatchNorm2d(base_width)
        cin = base_width
        for s, n in enumerate(blocks):
            stage = []
            for b in range(n):
                stride = 2 if (s > 0 and b == 0) else 1
                stage.append(block(cin, base_width << s, stride, preact_v1) if self.preact else block(cin, base_width << s, stride))
                cin = (base_width << s) * block.expansion
            setattr(self, 'layer%d' % (s + 1), nn.Sequential(*stage))
        if self.preact and not preact_v1:
            self.bn = nn.BatchNorm2d(cin)   # bn_before_fc
        self.linear = nn.Linear(cin, num_classes)

    def forward(self, x):
        if self.normalize is not None:
            x = self.normalize(x)
        h = self.conv1(x)
        if not self.preact:
            h = F.relu(self.bn1(h))
        for s in range(4):
            h = getattr(self, 'layer%d' % (s + 1))(h)
        if hasattr(self, 'bn'):
            h = F.relu(self.bn(h))
        return self.linear(h.mean((2, 3)))


CIFAR10_MEAN, CIFAR10_STD = (0.4914, 0.4822, 0.4465), (0.2471, 0.2435, 0.2616)


def build(arch, num_classes=10, activation='relu', mean=None, std=None, base_width=0, sub_block1=False,
          persistent_normalization=True, preact=False):
    """The PyTorch model of a classwise architecture name (nn/model_registry.cpp) with these options. preact:
    RobustBench's PreActResNet (shortcut from the raw input, no BN before the classifier); without it
    preact_resnet18 is classwise's default (PreActBlockV2 with bn_before_fc: Rice et al.'s L2 model)."""
    norm = None
    if mean is not None:
        norm = Normalized(mean, std, persistent_normalization)
    width = base_width or 64
    m = re.fullmatch(r'(dm_)?wrn(\d+)_(\d+)', arch)
    if m:
        depth, widen = int(m.group(2)), int(m.group(3))
        if (depth - 4) % 6 or depth < 10:
            raise ValueError('a WideResNet needs depth 6n+4, got %d' % depth)
        if m.group(1):
            return DMWideResNet(depth, widen, num_classes, activation, mean or CIFAR10_MEAN, std or CIFAR10_STD)
        return WideResNet(depth, widen, num_classes, sub_block1, norm)
    if arch in ('dm_preact_resnet18', 'dm_preact_resnet34'):
        return DMPreActResNet(int(arch[-2:]), num_classes, activation, mean or CIFAR10_MEAN, std or CIFAR10_STD, width)
    if arch == 'preact_resnet18':
        return ResNetFamily(PreAct, (2, 2, 2, 2), num_classes, width, norm, preact_v1=preact)
    if arch == 'resnet18':
        return ResNetFamily(Basic, (2, 2, 2, 2), num_classes, width, norm)
    if arch == 'resnet50':
        return ResNetFamily(Neck, (3, 4, 6, 3), num_classes, width, norm)
    raise ValueError('no RobustBench family for architecture %r (known: wrnD_W, dm_wrnD_W, dm_preact_resnet18/34, '
                     'preact_resnet18, resnet18, resnet50)' % arch)


def schema(model):
    """{key: shape} of the state dict classwise loads: the network's own entries, without normalisation buffers."""
    return {k: tuple(v.shape) for k, v in model.state_dict().items() if not k.startswith('normalize.')}
