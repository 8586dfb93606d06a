#!/usr/bin/env python3
"""Converts a RobustBench CIFAR-10/100 checkpoint into a classwise safetensors file (docs/robustbench.md).

    python3 tools/convert_robustbench.py CHECKPOINT.pt --model Wang2023Better_WRN-28-10 -o wrn28_10.safetensors
    python3 tools/convert_robustbench.py CHECKPOINT.pt --arch dm_wrn28_10 --activation silu \
        --normalize cifar10 --dataset cifar10 --threat-model Linf -o out.safetensors

Needs PyTorch (Debian: python3-torch), not RobustBench. The checkpoint is read as RobustBench's package saves it:
a state dict, or one wrapped as {'state_dict': ...}, {'model_state_dict': ...}, {'model': ...}, {'net': ...} or
{'last': ...}, with or without DataParallel's "module." and wrappers' "model." prefixes; normalisation buffers
saved in it ("mu"/"sigma", "normalize.mean"/"normalize.std", "mean"/"std") become the model's normalisation.
The keys and shapes must be exactly those of the architecture (tools/robustbench_models.py builds it and gives
them); anything else is one line on stderr naming the key, exit status 1, and no output file: the file is written
to a temporary name beside the output and renamed only when complete.
"""
import argparse
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CIFAR10 = ((0.4914, 0.4822, 0.4465), (0.2471, 0.2435, 0.2616))
CIFAR100 = ((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762))
NORMALIZATIONS = {'cifar10': CIFAR10, 'cifar100': CIFAR100, 'none': None}

# Leaderboard entries: name -> (arch, options). The dataset and threat model come from the entry's section.
# Options: activation, normalize (a key of NORMALIZATIONS or a (mean, std) pair), sub_block1, preact (RobustBench's
# PreActResNet: shortcut from the raw input, no BN before the classifier).
_DM = {'activation': 'silu'}
LEADERBOARD = {
    ('cifar10', 'Linf'): {
        'Standard': ('wrn28_10', {}),
        'Carmon2019Unlabeled': ('wrn28_10', {'sub_block1': True}),
        'Sehwag2020Hydra': ('wrn28_10', {'sub_block1': True}),
        'Wang2020Improving': ('wrn28_10', {'sub_block1': True}),
        'Hendrycks2019Using': ('wrn28_10', {'normalize': ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))}),
        'Rice2020Overfitting': ('wrn34_20', {'normalize': 'cifar10'}),
        'Zhang2019Theoretically': ('wrn34_10', {'sub_block1': True}),
        'Engstrom2019Robustness': ('resnet50', {'normalize': ((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010))}),
        'Wong2020Fast': ('preact_resnet18', {'preact': True, 'normalize': 'cifar10'}),
        'Gowal2020Uncovering_70_16': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Gowal2020Uncovering_70_16_extra': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Gowal2020Uncovering_34_20': ('dm_wrn34_20', dict(_DM, normalize='cifar10')),
        'Gowal2020Uncovering_28_10_extra': ('dm_wrn28_10', dict(_DM, normalize='cifar10')),
        'Rebuffi2021Fixing_70_16_cutmix_extra': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Rebuffi2021Fixing_70_16_cutmix_ddpm': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Rebuffi2021Fixing_106_16_cutmix_ddpm': ('dm_wrn106_16', dict(_DM, normalize='cifar10')),
        'Rebuffi2021Fixing_28_10_cutmix_ddpm': ('dm_wrn28_10', dict(_DM, normalize='cifar10')),
        'Rebuffi2021Fixing_R18_ddpm': ('dm_preact_resnet18', dict(_DM, normalize='cifar10')),
        'Gowal2021Improving_70_16_ddpm_100m': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Gowal2021Improving_28_10_ddpm_100m': ('dm_wrn28_10', dict(_DM, normalize='cifar10')),
        'Gowal2021Improving_R18_ddpm_100m': ('dm_preact_resnet18', dict(_DM, normalize='cifar10')),
        'Wang2023Better_WRN-28-10': ('dm_wrn28_10', dict(_DM, normalize='cifar10')),
        'Wang2023Better_WRN-70-16': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Cui2023Decoupled_WRN-28-10': ('dm_wrn28_10', dict(_DM, normalize='cifar10')),
        'Xu2023Exploring_WRN-28-10': ('dm_wrn28_10', dict(_DM, normalize='cifar10')),
        'Sehwag2021Proxy': ('wrn34_10', {}),
        'Sehwag2021Proxy_R18': ('resnet18', {}),
        'Addepalli2022Efficient_RN18': ('resnet18', {}),
        'Addepalli2022Efficient_WRN_34_10': ('wrn34_10', {}),
        'Debenedetti2022Light_XCiT-S12': None,   # a transformer: out of scope
    },
    ('cifar10', 'L2'): {
        'Standard': ('wrn28_10', {}),
        'Engstrom2019Robustness': ('resnet50', {'normalize': ((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010))}),
        'Rice2020Overfitting': ('preact_resnet18', {'normalize': 'cifar10'}),   # PreActBlockV2, BN before the classifier
        'Gowal2020Uncovering': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Gowal2020Uncovering_extra': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Rebuffi2021Fixing_70_16_cutmix_extra': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Rebuffi2021Fixing_70_16_cutmix_ddpm': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Rebuffi2021Fixing_28_10_cutmix_ddpm': ('dm_wrn28_10', dict(_DM, normalize='cifar10')),
        'Rebuffi2021Fixing_R18_cutmix_ddpm': ('dm_preact_resnet18', dict(_DM, normalize='cifar10')),
        'Wang2023Better_WRN-28-10': ('dm_wrn28_10', dict(_DM, normalize='cifar10')),
        'Wang2023Better_WRN-70-16': ('dm_wrn70_16', dict(_DM, normalize='cifar10')),
        'Sehwag2021Proxy': ('wrn34_10', {}),
        'Sehwag2021Proxy_R18': ('resnet18', {}),
    },
    ('cifar100', 'Linf'): {
        'Gowal2020Uncovering': ('dm_wrn70_16', dict(_DM, normalize='cifar100')),
        'Gowal2020Uncovering_extra': ('dm_wrn70_16', dict(_DM, normalize='cifar100')),
        'Rebuffi2021Fixing_70_16_cutmix_ddpm': ('dm_wrn70_16', dict(_DM, normalize='cifar100')),
        'Rebuffi2021Fixing_28_10_cutmix_ddpm': ('dm_wrn28_10', dict(_DM, normalize='cifar100')),
        'Rebuffi2021Fixing_R18_ddpm': ('dm_preact_resnet18', dict(_DM, normalize='cifar100')),
        'Wang2023Better_WRN-28-10': ('dm_wrn28_10', dict(_DM, normalize='cifar100')),
        'Wang2023Better_WRN-70-16': ('dm_wrn70_16', dict(_DM, normalize='cifar100')),
        'Cui2023Decoupled_WRN-28-10': ('dm_wrn28_10', dict(_DM, normalize='cifar100')),
        'Addepalli2022Efficient_WRN_34_10': ('wrn34_10', {}),
        'Sehwag2021Proxy': ('wrn34_10', {}),
    },
}

WRAPPERS = ('state_dict', 'model_state_dict', 'model', 'net', 'last')
PREFIXES = ('module.', 'model.')
NORM_KEYS = (('mu', 'sigma'), ('normalize.mean', 'normalize.std'), ('mean', 'std'))


class ConversionError(Exception):
    pass


def unwrap(obj, path):
    """The state dict inside a checkpoint: the object itself or the value under one of WRAPPERS, repeatedly."""
    import torch
    for _ in range(4):
        if not isinstance(obj, dict):
            break
        if obj and all(torch.is_tensor(v) for v in obj.values()):
            return obj
        inner = next((obj[k] for k in WRAPPERS if k in obj and isinstance(obj[k], dict)), None)
        if inner is None:
            break
        obj = inner
    if isinstance(obj, dict):
        bad = next((k for k, v in obj.items() if not torch.is_tensor(v)), None)
        if bad is not None:
            raise ConversionError("%s: key '%s' is not a tensor and no state dict is wrapped under %s" %
                                  (path, bad, '/'.join(WRAPPERS)))
        if not obj:
            raise ConversionError('%s: the checkpoint holds no tensors' % path)
        return obj
    raise ConversionError('%s: not a state dict (a %s)' % (path, type(obj).__name__))


def strip_prefixes(state):
    out = {}
    for k, v in state.items():
        key = k
        while key.startswith(PREFIXES):
            key = key[len(next(p for p in PREFIXES if key.startswith(p))):]
        if key in out:
            raise ConversionError("key '%s' appears twice once prefixes are removed" % key)
        out[key] = v
    return out


def take_normalization(state):
    """Removes saved normalisation buffers from state; (mean, std) lists, or None."""
    for m, s in NORM_KEYS:
        if m in state and s in state:
            mean, std = state.pop(m), state.pop(s)
            return [float(v) for v in mean.flatten()], [float(v) for v in std.flatten()]
    return None


def resolve(args):
    """(arch, options, dataset, threat model) from --model or --arch and the explicit flags (which win)."""
    opts, dataset, threat = {}, args.dataset, args.threat_model
    if args.model:
        hits = [(d, t, e) for (d, t), entries in LEADERBOARD.items() for n, e in entries.items()
                if n == args.model and (dataset is None or d == dataset) and (threat is None or t == threat)]
        if not hits:
            raise ConversionError("--model '%s' is not in the table of docs/robustbench.md; pass --arch and its "
                                  "options instead" % args.model)
        if len(hits) > 1:
            raise ConversionError("--model '%s' is in several sections; name one with --dataset and --threat-model"
                                  % args.model)
        dataset, threat, entry = hits[0]
        if entry is None:
            raise ConversionError("--model '%s' is a transformer: classwise has no such architecture" % args.model)
        arch, opts = entry[0], dict(entry[1])
    elif args.arch:
        arch = args.arch
    else:
        raise ConversionError('name the model with --model (a leaderboard entry) or --arch (an architecture)')
    for key in ('activation', 'normalize', 'base_width'):
        if getattr(args, key) is not None:
            opts[key] = getattr(args, key)
    if args.sub_block1:
        opts['sub_block1'] = True
    if args.preact:
        opts['preact'] = True
    return arch, opts, dataset or 'cifar10', threat or 'Linf'


def convert(checkpoint, out, arch, opts, dataset, threat, num_classes=None, source=None):
    import torch
    import robustbench_models as rm
    try:
        raw = torch.load(checkpoint, map_location='cpu')
    except Exception as e:   # a missing, truncated or foreign file: torch says why in many lines
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ConversionError('%s: cannot read as a PyTorch checkpoint (%s)' % (checkpoint, first))
    state = strip_prefixes(unwrap(raw, checkpoint))
    saved_norm = take_normalization(state)
    norm = opts.get('normalize', 'none' if saved_norm is None else None)
    if isinstance(norm, str):
        if norm not in NORMALIZATIONS:
            raise ConversionError("--normalize must be one of %s, got '%s'" % (', '.join(NORMALIZATIONS), norm))
        norm = NORMALIZATIONS[norm]
    if saved_norm is not None:
        norm = saved_norm   # what the model ran with
    if arch.startswith('dm_') and norm is None:
        raise ConversionError('%s has its mean and std built in: pass --normalize cifar10 or cifar100' % arch)
    if num_classes is None:
        head = next((state[k] for k in ('fc.weight', 'logits.weight', 'linear.weight') if k in state), None)
        num_classes = int(head.shape[0]) if head is not None else {'cifar10': 10, 'cifar100': 100}.get(dataset, 10)
    activation = opts.get('activation', 'relu')
    if activation == 'swish':
        activation = 'silu'
    if activation != 'relu' and not arch.startswith('dm_'):
        raise ConversionError('%s is a ReLU network; --activation %s is for the dm_* architectures' % (arch, activation))
    base_width = int(opts.get('base_width') or 0)
    try:
        model = rm.build(arch, num_classes, activation, norm[0] if norm else None, norm[1] if norm else None,
                         base_width, bool(opts.get('sub_block1')), preact=bool(opts.get('preact')))
    except (ValueError, KeyError) as e:
        raise ConversionError('--arch %s: %s' % (arch, e))
    expected = rm.schema(model)
    for key in state:
        if key not in expected:
            raise ConversionError("%s: unknown key '%s' for %s (%d keys expected)" % (checkpoint, key, arch, len(expected)))
    tensors = {}
    for key, shape in expected.items():
        if key not in state:
            if key.endswith('num_batches_tracked'):   # checkpoints saved before PyTorch 0.4.1 have none
                tensors[key] = torch.zeros((), dtype=torch.int64)
                continue
            raise ConversionError("%s: key '%s' of %s is missing" % (checkpoint, key, arch))
        t = state[key]
        if tuple(t.shape) != shape:
            raise ConversionError("%s: key '%s' has shape %s, %s expects %s" %
                                  (checkpoint, key, list(t.shape), arch, list(shape)))
        if key.endswith('num_batches_tracked'):
            tensors[key] = t.to(torch.int64).reshape(())
        elif not t.is_floating_point():
            raise ConversionError("%s: key '%s' holds %s, not floating-point weights" % (checkpoint, key, t.dtype))
        else:
            t = t.to(torch.float32)
            if not torch.isfinite(t).all():
                raise ConversionError("%s: key '%s' holds NaN or infinite values" % (checkpoint, key))
            tensors[key] = t
    fmt = lambda v: ','.join('%.9g' % x for x in v)
    metadata = {
        'arch': arch, 'num_classes': str(num_classes), 'in_channels': '3', 'input_size': '32',
        'normalize_mean': fmt(norm[0]) if norm else 'none', 'normalize_std': fmt(norm[1]) if norm else 'none',
        'activation': activation, 'dataset': dataset, 'threat_model': threat,
        'method': 'robustbench', 'source': source or os.path.basename(checkpoint),
        'wrn_sub_block1': 'true' if opts.get('sub_block1') else 'false',
        'preact_shortcut': 'input' if opts.get('preact') else 'activation',
        'preact_final_bn': 'false' if opts.get('preact') else 'true',
    }
    if base_width:
        metadata['base_width'] = str(base_width)
    write_atomically(out, tensors, metadata)
    return metadata


def safetensors_bytes(tensors, metadata):
    header, blobs, offset = {'__metadata__': metadata}, [], 0
    for name, t in tensors.items():
        a = t.contiguous().numpy()
        dtype, b = ('I64', a.astype('<i8').tobytes()) if t.dtype.is_floating_point is False else \
            ('F32', a.astype('<f4').tobytes())
        header[name] = {'dtype': dtype, 'shape': list(t.shape), 'data_offsets': [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    return struct.pack('<Q', len(text)) + text + b''.join(blobs)


def write_atomically(path, tensors, metadata):
    tmp = '%s.tmp%d' % (path, os.getpid())
    try:
        with open(tmp, 'wb') as f:
            f.write(safetensors_bytes(tensors, metadata))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise ConversionError('%s: cannot write (%s)' % (path, e.strerror or e))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('checkpoint', help='the .pt file RobustBench downloaded (models/<dataset>/<threat>/<name>.pt)')
    p.add_argument('-o', '--out', required=True, help='the classwise .safetensors to write')
    p.add_argument('--model', help='a leaderboard entry of docs/robustbench.md, e.g. Wang2023Better_WRN-28-10')
    p.add_argument('--arch', help='a classwise architecture: wrnD_W, dm_wrnD_W, dm_preact_resnet18, '
                                  'preact_resnet18, resnet18, resnet50')
    p.add_argument('--dataset', choices=['cifar10', 'cifar100'])
    p.add_argument('--threat-model', choices=['Linf', 'L2', 'corruptions'])
    p.add_argument('--activation', choices=['relu', 'silu', 'swish'])
    p.add_argument('--normalize', help='cifar10, cifar100 or none (saved mu/sigma in the checkpoint win)')
    p.add_argument('--base-width', type=int, help='first-stage width of a narrowed ResNet (64 on the leaderboard)')
    p.add_argument('--sub-block1', action='store_true', help="TRADES' WideResNet with its unused sub_block1")
    p.add_argument('--preact', action='store_true', help="RobustBench's PreActResNet: shortcut from the raw input, "
                                                         "no BN before the classifier")
    p.add_argument('--num-classes', type=int)
    args = p.parse_args(argv)
    try:
        arch, opts, dataset, threat = resolve(args)
        md = convert(args.checkpoint, args.out, arch, opts, dataset, threat, args.num_classes,
                     args.model or os.path.basename(args.checkpoint))
    except ConversionError as e:
        print('convert_robustbench: %s' % e, file=sys.stderr)
        return 1
    print('wrote %s: %s, %s classes, activation %s, normalisation %s, %s %s' %
          (args.out, md['arch'], md['num_classes'], md['activation'],
           md['normalize_mean'] if md['normalize_mean'] == 'none' else 'mean %s std %s' % (md['normalize_mean'], md['normalize_std']),
           md['dataset'], md['threat_model']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
