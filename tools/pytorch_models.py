#!/usr/bin/python3
"""PyTorch twins of the classwise model zoo (nn/models/*), written from the public definitions.

Not used by the build or the tests: it produced the parameter counts asserted in tests/test_nn_models.cpp and
the state_dict key fixtures tests/fixtures/keys_<arch>.txt ("name shape" per line, state_dict order).
Needs Debian's python3-torch (apt-get install -y python3-torch), run with /usr/bin/python3:

    /usr/bin/python3 tools/pytorch_models.py counts          # parameter-count table
    /usr/bin/python3 tools/pytorch_models.py keys OUT_DIR    # writes keys_<arch>.txt for the key-list tests

Each definition follows the reference named in its docstring; the only adaptation is the final pooling,
which is a global average over the last feature map so that 28x28 and 64x64 inputs work (at 32x32 it is
exactly the original avg-pool). The C++ side makes the same choices (see nn/models/*.h).
"""
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def pool_all(x):
    """Global average pool + flatten: [N,C,H,W] -> [N,C]."""
    return F.adaptive_avg_pool2d(x, 1).flatten(1)


class LeNet5(nn.Module):
    """kuangliu models/lenet.py (conv5-6, pool, conv5-16, pool, fc120, fc84, fc); 28x28 inputs get conv1 padding 2
    as in LeCun's original so that the flattened size is 16*5*5 for both MNIST and CIFAR."""

    def __init__(self, num_classes=10, in_channels=3, input_size=32):
        super().__init__()
        pad = 2 if input_size == 28 else 0
        self.conv1 = nn.Conv2d(in_channels, 6, 5, padding=pad)
        self.conv2 = nn.Conv2d(6, 16, 5)
        side = ((input_size + 2 * pad - 4) // 2 - 4) // 2
        self.fc1 = nn.Linear(16 * side * side, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc3(F.relu(self.fc2(x)))


class SmallCNN(nn.Module):
    """TRADES models/small_cnn.py (OrderedDict names feature_extractor.convK, classifier.fcK)."""

    def __init__(self, num_classes=10, in_channels=1, input_size=28):
        super().__init__()
        side = ((input_size - 4) // 2 - 4) // 2
        self.feature_extractor = nn.Sequential()
        fe = self.feature_extractor
        fe.add_module('conv1', nn.Conv2d(in_channels, 32, 3)); fe.add_module('relu1', nn.ReLU())
        fe.add_module('conv2', nn.Conv2d(32, 32, 3)); fe.add_module('relu2', nn.ReLU())
        fe.add_module('maxpool1', nn.MaxPool2d(2, 2))
        fe.add_module('conv3', nn.Conv2d(32, 64, 3)); fe.add_module('relu3', nn.ReLU())
        fe.add_module('conv4', nn.Conv2d(64, 64, 3)); fe.add_module('relu4', nn.ReLU())
        fe.add_module('maxpool2', nn.MaxPool2d(2, 2))
        self.classifier = nn.Sequential()
        cl = self.classifier
        cl.add_module('fc1', nn.Linear(64 * side * side, 200)); cl.add_module('relu1', nn.ReLU())
        cl.add_module('drop', nn.Dropout(0.5))
        cl.add_module('fc2', nn.Linear(200, 200)); cl.add_module('relu2', nn.ReLU())
        cl.add_module('fc3', nn.Linear(200, num_classes))

    def forward(self, x):
        return self.classifier(self.feature_extractor(x).flatten(1))


def mnist_wong(num_classes=10, in_channels=1, input_size=28):
    """Wong et al. fast_adversarial MNIST/mnist_net: a bare nn.Sequential (keys 0, 2, 5, 7)."""
    side = input_size // 4
    return nn.Sequential(nn.Conv2d(in_channels, 16, 4, stride=2, padding=1), nn.ReLU(),
                         nn.Conv2d(16, 32, 4, stride=2, padding=1), nn.ReLU(), nn.Flatten(),
                         nn.Linear(32 * side * side, 100), nn.ReLU(), nn.Linear(100, num_classes))


class GtsrbCNN(nn.Module):
    """docs/protocols/training.md 2.2 (our choice): conv3x3 32, 64, pool, 128, 128, pool (padding 1, ReLU), FC -> C."""

    def __init__(self, num_classes=43, in_channels=3, input_size=32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.Conv2d(128, 128, 3, padding=1),
            nn.ReLU(), nn.MaxPool2d(2))
        side = input_size // 4
        self.classifier = nn.Linear(128 * side * side, num_classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


VGG_CFG = {
    'vgg16': [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M'],
    'vgg19': [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 256, 'M', 512, 512, 512, 512, 'M', 512, 512, 512, 512, 'M'],
}


class VGG(nn.Module):
    """kuangliu models/vgg.py: conv3x3(bias)+BN+ReLU per number, MaxPool2d(2) per 'M', AvgPool2d(1) (identity),
    classifier Linear(512, C). A pool that would shrink a 1x1 map to 0x0 (28x28 inputs) is skipped."""

    def __init__(self, name, num_classes=10, in_channels=3, input_size=32):
        super().__init__()
        layers, c, side = [], in_channels, input_size
        for v in VGG_CFG[name]:
            if v == 'M':
                layers.append(nn.MaxPool2d(2, 2) if side >= 2 else nn.Identity())
                side = side // 2 if side >= 2 else side
            else:
                layers += [nn.Conv2d(c, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU()]
                c = v
        layers.append(nn.AvgPool2d(1, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(512, num_classes)

    def forward(self, x):
        return self.classifier(pool_all(self.features(x)))


class BasicBlock(nn.Module):
    """kuangliu models/resnet.py BasicBlock (post-activation)."""
    expansion = 1

    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class Bottleneck(nn.Module):
    """kuangliu models/resnet.py Bottleneck (1x1, 3x3 with the stride, 1x1 x4)."""
    expansion = 4

    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, 4 * planes, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(4 * planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != 4 * planes:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, 4 * planes, 1, stride, bias=False), nn.BatchNorm2d(4 * planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        return F.relu(self.bn3(self.conv3(out)) + self.shortcut(x))


class ResNet(nn.Module):
    """kuangliu models/resnet.py: CIFAR stem conv3x3 64, 4 stages, avg-pool, linear."""

    def __init__(self, block, blocks, num_classes=10, in_channels=3, input_size=32):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        cin = 64
        for s, (planes, n) in enumerate(zip([64, 128, 256, 512], blocks)):
            stage = []
            for b in range(n):
                stage.append(block(cin, planes, 2 if s > 0 and b == 0 else 1))
                cin = planes * block.expansion
            setattr(self, f'layer{s + 1}', nn.Sequential(*stage))
        self.linear = nn.Linear(512 * block.expansion, num_classes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
        return self.linear(pool_all(out))


class PreActBlock(nn.Module):
    """Rice et al. robust_overfitting preactresnet.py PreActBlock; shortcut from relu(bn1(x)) by default."""

    def __init__(self, cin, planes, stride, shortcut_from_input=False):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.from_input = shortcut_from_input
        if stride != 1 or cin != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, planes, 1, stride, bias=False))

    def forward(self, x):
        a = F.relu(self.bn1(x))
        skip = x
        if hasattr(self, 'shortcut'):
            skip = self.shortcut(x if self.from_input else a)
        out = self.conv1(a)
        out = self.conv2(F.relu(self.bn2(out)))
        return out + skip


class PreActResNet18(nn.Module):
    """Rice et al. PreActResNet18 (final BN + ReLU, 4x4 avg-pool == global pool at 32x32)."""

    def __init__(self, num_classes=10, in_channels=3, input_size=32, shortcut_from_input=False, final_bn=True):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 64, 3, 1, 1, bias=False)
        cin = 64
        for s, planes in enumerate([64, 128, 256, 512]):
            stage = []
            for b in range(2):
                stage.append(PreActBlock(cin, planes, 2 if s > 0 and b == 0 else 1, shortcut_from_input))
                cin = planes
            setattr(self, f'layer{s + 1}', nn.Sequential(*stage))
        self.final_bn = final_bn
        if final_bn:
            self.bn = nn.BatchNorm2d(512)
        self.linear = nn.Linear(512, num_classes)

    def forward(self, x):
        out = self.conv1(x)
        out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
        if self.final_bn:
            out = F.relu(self.bn(out))
        return self.linear(pool_all(out))


class WideBlock(nn.Module):
    """TRADES models/wideresnet.py BasicBlock (robustbench identical): pre-activation; when the width changes the
    activated input feeds both the residual branch and the 1x1 convShortcut."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin)
        self.relu1 = nn.ReLU()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu2 = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.equal = cin == cout
        self.convShortcut = None if self.equal else nn.Conv2d(cin, cout, 1, stride, 0, bias=False)

    def forward(self, x):
        a = self.relu1(self.bn1(x))
        out = self.conv2(self.relu2(self.bn2(self.conv1(a))))
        return out + (x if self.equal else self.convShortcut(a))


class NetworkBlock(nn.Module):
    def __init__(self, n, cin, cout, stride):
        super().__init__()
        self.layer = nn.Sequential(*[WideBlock(cin if i == 0 else cout, cout, stride if i == 0 else 1)
                                     for i in range(n)])

    def forward(self, x):
        return self.layer(x)


class WideResNet(nn.Module):
    """TRADES / robustbench WideResNet; sub_block1 (TRADES only: built, never used in forward) optional."""

    def __init__(self, depth, widen, num_classes=10, in_channels=3, input_size=32, sub_block1=False):
        super().__init__()
        n = (depth - 4) // 6
        ch = [16, 16 * widen, 32 * widen, 64 * widen]
        self.conv1 = nn.Conv2d(in_channels, ch[0], 3, 1, 1, bias=False)
        self.block1 = NetworkBlock(n, ch[0], ch[1], 1)
        if sub_block1:
            self.sub_block1 = NetworkBlock(n, ch[0], ch[1], 1)
        self.block2 = NetworkBlock(n, ch[1], ch[2], 2)
        self.block3 = NetworkBlock(n, ch[2], ch[3], 2)
        self.bn1 = nn.BatchNorm2d(ch[3])
        self.relu = nn.ReLU()
        self.fc = nn.Linear(ch[3], num_classes)

    def forward(self, x):
        out = self.block3(self.block2(self.block1(self.conv1(x))))
        return self.fc(pool_all(self.relu(self.bn1(out))))


class DenseBottleneck(nn.Module):
    """kuangliu models/densenet.py Bottleneck: BN-ReLU-conv1x1(4k)-BN-ReLU-conv3x3(k), output cat([new, x])."""

    def __init__(self, cin, growth):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, 4 * growth, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(4 * growth)
        self.conv2 = nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False)

    def forward(self, x):
        out = self.conv1(F.relu(self.bn1(x)))
        out = self.conv2(F.relu(self.bn2(out)))
        return torch.cat([out, x], 1)


class Transition(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.bn = nn.BatchNorm2d(cin)
        self.conv = nn.Conv2d(cin, cout, 1, bias=False)

    def forward(self, x):
        return F.avg_pool2d(self.conv(F.relu(self.bn(x))), 2)


class DenseNet(nn.Module):
    """kuangliu models/densenet.py DenseNet (growth 32, reduction 0.5)."""

    def __init__(self, blocks, growth=32, num_classes=10, in_channels=3, input_size=32):
        super().__init__()
        c = 2 * growth
        self.conv1 = nn.Conv2d(in_channels, c, 3, padding=1, bias=False)
        for i, n in enumerate(blocks):
            setattr(self, f'dense{i + 1}', nn.Sequential(*[DenseBottleneck(c + j * growth, growth) for j in range(n)]))
            c += n * growth
            if i < 3:
                out = int(math.floor(c * 0.5))
                setattr(self, f'trans{i + 1}', Transition(c, out))
                c = out
        self.bn = nn.BatchNorm2d(c)
        self.linear = nn.Linear(c, num_classes)

    def forward(self, x):
        out = self.conv1(x)
        out = self.trans1(self.dense1(out))
        out = self.trans2(self.dense2(out))
        out = self.trans3(self.dense3(out))
        out = self.dense4(out)
        return self.linear(pool_all(F.relu(self.bn(out))))


def conv_bn_relu(cin, cout, k):
    return [nn.Conv2d(cin, cout, k, padding=k // 2), nn.BatchNorm2d(cout), nn.ReLU()]


class Inception(nn.Module):
    """kuangliu models/googlenet.py Inception: four branches concatenated (the '5x5' branch is two 3x3)."""

    def __init__(self, cin, n1, n3r, n3, n5r, n5, npool):
        super().__init__()
        self.b1 = nn.Sequential(*conv_bn_relu(cin, n1, 1))
        self.b2 = nn.Sequential(*conv_bn_relu(cin, n3r, 1), *conv_bn_relu(n3r, n3, 3))
        self.b3 = nn.Sequential(*conv_bn_relu(cin, n5r, 1), *conv_bn_relu(n5r, n5, 3), *conv_bn_relu(n5, n5, 3))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, 1, 1), *conv_bn_relu(cin, npool, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


class GoogLeNet(nn.Module):
    """kuangliu models/googlenet.py GoogLeNet (CIFAR: 3x3 stem, no stem pooling)."""

    def __init__(self, num_classes=10, in_channels=3, input_size=32):
        super().__init__()
        self.pre_layers = nn.Sequential(*conv_bn_relu(in_channels, 192, 3))
        self.a3 = Inception(192, 64, 96, 128, 16, 32, 32)
        self.b3 = Inception(256, 128, 128, 192, 32, 96, 64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.a4 = Inception(480, 192, 96, 208, 16, 48, 64)
        self.b4 = Inception(512, 160, 112, 224, 24, 64, 64)
        self.c4 = Inception(512, 128, 128, 256, 24, 64, 64)
        self.d4 = Inception(512, 112, 144, 288, 32, 64, 64)
        self.e4 = Inception(528, 256, 160, 320, 32, 128, 128)
        self.a5 = Inception(832, 256, 160, 320, 32, 128, 128)
        self.b5 = Inception(832, 384, 192, 384, 48, 128, 128)
        self.linear = nn.Linear(1024, num_classes)

    def forward(self, x):
        out = self.b3(self.a3(self.pre_layers(x)))
        out = self.maxpool(out)
        out = self.e4(self.d4(self.c4(self.b4(self.a4(out)))))
        out = self.maxpool(out)
        out = self.b5(self.a5(out))
        return self.linear(pool_all(out))


def make(arch, num_classes=10, in_channels=3, input_size=32, **kw):
    a = dict(num_classes=num_classes, in_channels=in_channels, input_size=input_size)
    table = {
        'lenet5': lambda: LeNet5(**a),
        'small_cnn': lambda: SmallCNN(**a),
        'mnist_wong': lambda: mnist_wong(**a),
        'gtsrb_cnn': lambda: GtsrbCNN(**a),
        'vgg16': lambda: VGG('vgg16', **a),
        'vgg19': lambda: VGG('vgg19', **a),
        'resnet18': lambda: ResNet(BasicBlock, [2, 2, 2, 2], **a),
        'resnet34': lambda: ResNet(BasicBlock, [3, 4, 6, 3], **a),
        'resnet50': lambda: ResNet(Bottleneck, [3, 4, 6, 3], **a),
        'preact_resnet18': lambda: PreActResNet18(**a, **kw),
        'wrn28_10': lambda: WideResNet(28, 10, **a, **kw),
        'wrn34_10': lambda: WideResNet(34, 10, **a, **kw),
        'densenet121': lambda: DenseNet([6, 12, 24, 16], **a),
        'densenet169': lambda: DenseNet([6, 12, 32, 32], **a),
        'googlenet': lambda: GoogLeNet(**a),
    }
    return table[arch]()


# (arch, num_classes, in_channels, input_size, extra options): the rows of the C++ parameter-count test.
COUNT_ROWS = [
    ('lenet5', 10, 1, 28, {}), ('lenet5', 10, 3, 32, {}),
    ('small_cnn', 10, 1, 28, {}),
    ('mnist_wong', 10, 1, 28, {}),
    ('gtsrb_cnn', 43, 3, 32, {}), ('gtsrb_cnn', 17, 3, 32, {}),
    ('vgg16', 10, 3, 32, {}), ('vgg19', 100, 3, 32, {}),
    ('resnet18', 10, 3, 32, {}), ('resnet34', 10, 3, 32, {}), ('resnet50', 10, 3, 32, {}),
    ('resnet18', 200, 3, 64, {}),
    ('preact_resnet18', 10, 3, 32, {}), ('preact_resnet18', 100, 3, 32, {}),
    ('preact_resnet18', 10, 3, 32, {'final_bn': False}), ('preact_resnet18', 10, 1, 28, {}),
    ('wrn28_10', 10, 3, 32, {}), ('wrn34_10', 10, 3, 32, {}), ('wrn34_10', 10, 3, 32, {'sub_block1': True}),
    ('densenet121', 10, 3, 32, {}), ('densenet169', 10, 3, 32, {}),
    ('googlenet', 10, 3, 32, {}),
]

# arch -> (num_classes, in_channels, input_size) of its key fixture; every architecture of the zoo.
KEY_FIXTURES = {
    'lenet5': (10, 1, 28), 'small_cnn': (10, 1, 28), 'mnist_wong': (10, 1, 28), 'gtsrb_cnn': (43, 3, 32),
    'vgg16': (10, 3, 32), 'vgg19': (10, 3, 32), 'resnet18': (10, 3, 32), 'resnet34': (10, 3, 32),
    'resnet50': (10, 3, 32), 'preact_resnet18': (10, 3, 32), 'wrn28_10': (10, 3, 32), 'wrn34_10': (10, 3, 32),
    'densenet121': (10, 3, 32), 'densenet169': (10, 3, 32), 'googlenet': (10, 3, 32),
}


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == 'counts':
        for arch, c, ch, size, kw in COUNT_ROWS:
            m = make(arch, c, ch, size, **kw)
            n = sum(p.numel() for p in m.parameters())
            with torch.no_grad():
                y = m.eval()(torch.zeros(1, ch, size, size))
            assert tuple(y.shape) == (1, c), (arch, y.shape)
            print(f'{arch:16s} classes={c:3d} in={ch} size={size} {str(kw):22s} params={n}')
    elif len(sys.argv) == 3 and sys.argv[1] == 'keys':
        for arch, (c, ch, size) in KEY_FIXTURES.items():
            m = make(arch, c, ch, size)
            with open(f'{sys.argv[2]}/keys_{arch}.txt', 'w') as f:
                f.write(f'# {arch} num_classes={c} in_channels={ch} input_size={size} (tools/pytorch_models.py)\n')
                for k, v in m.state_dict().items():
                    f.write(f'{k} [{",".join(str(d) for d in v.shape)}]\n')
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
