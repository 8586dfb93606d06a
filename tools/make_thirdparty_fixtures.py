#!/usr/bin/python3
"""Writes tests/fixtures/thirdparty/: tiny dataset files written by the reference tools of each format (not by
our own writers), and reference values for datasets/image.cpp's resize. tests/test_datasets_thirdparty.cpp loads
them through our loaders and compares value by value.

Not part of the build or the tests; needs Debian's python3-numpy, python3-scipy and python3-pil:
    /usr/bin/python3 tools/make_thirdparty_fixtures.py

Pixels (uint8) of image i at row y, column x, channel c, all formats:
    pixel(i, y, x, c) = (97 i + 59 c + 13 y + 7 x + (x * y) mod 11) mod 256
Files:
  svhn/train_32x32.mat   scipy.io.savemat, MAT v5 uncompressed; svhn/test_32x32.mat the same, do_compression=True.
                         SVHN format 2: X uint8 [32, 32, 3, N] (X[y, x, c, i]), y double [N, 1] holding 1..10
                         where 10 is digit 0; digits of image i: (3 i + 1) mod 10 (train N=5), (3 i + 2) mod 10
                         (test N=4).
  CIFAR-10-C/fog.npy     np.save of uint8 [5 * 2, 32, 32, 3] (NHWC), severities stacked; labels.npy int64 [10]
                         with label (7 i + 3) mod 10.
  cifar-100-binary/train.bin, test.bin   records of coarse byte, fine byte, then the image as CHW bytes
                         (numpy's transpose(2, 0, 1) of the HWC image, as the CIFAR page documents); train N=4,
                         test N=3; fine label of image i = (37 i + 5) mod 100 (test: + 50), coarse = fine mod 20.
  resize_<case>_in.npy (uint8 HWC), resize_<case>_ref.npy (float32 HWC, unrounded, in 0..255): the stb_image_resize
                         v0.97 default filters written out in numpy from the library's documentation: Catmull-Rom
                         along an axis that grows, Mitchell-Netravali (B = C = 1/3) along an axis that shrinks,
                         pixel centres at i + 0.5, edge pixels replicated (STBIR_EDGE_CLAMP), weights normalised
                         to sum 1 per output pixel, values /255 in and x255 out (stb then rounds half up).
                         Cross-checked here against PIL's BICUBIC (Keys a = -0.5 = Catmull-Rom) in float mode on
                         the interior pixels of the upscaled case, where edge handling plays no part.
"""
import os

import numpy as np
import scipy.io
from PIL import Image

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures',
                                    'thirdparty'))


def pixels(first, n, h=32, w=32):
    """uint8 [n, h, w, 3] from the documented formula, images first..first+n-1."""
    i, y, x, c = np.meshgrid(np.arange(first, first + n), np.arange(h), np.arange(w), np.arange(3), indexing='ij')
    return ((97 * i + 59 * c + 13 * y + 7 * x + (x * y) % 11) % 256).astype(np.uint8)


def write_svhn():
    os.makedirs(f'{OUT}/svhn', exist_ok=True)
    for split, n, offset, compress in (('train', 5, 1, False), ('test', 4, 2, True)):
        imgs = pixels(0, n)                                   # [n, 32, 32, 3]
        digits = (3 * np.arange(n) + offset) % 10
        y = np.where(digits == 0, 10, digits).astype(np.float64).reshape(n, 1)
        X = np.ascontiguousarray(imgs.transpose(1, 2, 3, 0))  # [32, 32, 3, n]: X[y, x, c, i]
        scipy.io.savemat(f'{OUT}/svhn/{split}_32x32.mat', {'X': X, 'y': y}, format='5', do_compression=compress)


def write_cifar10c():
    os.makedirs(f'{OUT}/CIFAR-10-C', exist_ok=True)
    n = 10
    np.save(f'{OUT}/CIFAR-10-C/fog.npy', pixels(0, n))
    np.save(f'{OUT}/CIFAR-10-C/labels.npy', ((7 * np.arange(n) + 3) % 10).astype(np.int64))


def write_cifar100():
    os.makedirs(f'{OUT}/cifar-100-binary', exist_ok=True)
    for split, n, shift in (('train', 4, 0), ('test', 3, 50)):
        fine = (37 * np.arange(n) + 5 + shift) % 100
        records = [np.concatenate([np.array([f % 20, f], dtype=np.uint8), img.transpose(2, 0, 1).reshape(-1)])
                   for f, img in zip(fine, pixels(0, n))]
        np.stack(records).tofile(f'{OUT}/cifar-100-binary/{split}.bin')


def catmull_rom(x):
    x = np.abs(x)
    return np.where(x < 1, 1 - x * x * (2.5 - 1.5 * x), np.where(x < 2, 2 - x * (4 + x * (0.5 * x - 2.5)), 0.0))


def mitchell(x):
    x = np.abs(x)
    return np.where(x < 1, (16 + x * x * (21 * x - 36)) / 18,
                    np.where(x < 2, (32 + x * (-60 + x * (36 - 7 * x))) / 18, 0.0))


def resample_matrix(n_in, n_out):
    """[n_out, n_in] weights along one axis. Kernel support is 2 in the smaller pixel grid; input pixels beyond
    the image (clamped to the edge) keep their weight, which is what replicating the edge means."""
    s = n_out / n_in
    up = s >= 1
    kernel = catmull_rom if up else mitchell
    reach = 2 / min(s, 1) + 2
    m = np.zeros((n_out, n_in))
    for j in range(n_out):
        centre = (j + 0.5) / s                               # output pixel centre in input coordinates
        i = np.arange(int(np.floor(centre - reach)), int(np.ceil(centre + reach)) + 1)
        w = kernel((centre - (i + 0.5)) * min(s, 1))         # distance measured in the smaller grid
        w /= w.sum()
        np.add.at(m[j], np.clip(i, 0, n_in - 1), w)
    return m


def separable_resample(img, out_w, out_h):
    """float64 HWC in 0..255 units, before stb's clamp to [0, 255] and rounding."""
    mx, my = resample_matrix(img.shape[1], out_w), resample_matrix(img.shape[0], out_h)
    return np.einsum('yh,hwc,xw->yxc', my, img.astype(np.float64) / 255, mx) * 255


RESIZE_CASES = {'up': (11, 7, 32, 32), 'down': (45, 38, 32, 32), 'mixed': (20, 45, 32, 24)}  # in w, h -> out w, h


def resize_input(w, h):
    """uint8 [h, w, 3]: a hash of (y, x, c), so that neighbouring pixels differ by large steps."""
    y, x, c = np.meshgrid(np.arange(h), np.arange(w), np.arange(3), indexing='ij')
    return (((y * 131 + x * 31 + c * 7) * 2654435761 >> 13) % 256).astype(np.uint8)


def write_resize():
    for name, (w, h, ow, oh) in RESIZE_CASES.items():
        img = resize_input(w, h)
        raw = separable_resample(img, ow, oh)
        ref = np.clip(raw, 0, 255)
        np.save(f'{OUT}/resize_{name}_in.npy', img)
        np.save(f'{OUT}/resize_{name}_ref.npy', ref.astype(np.float32))
        if name == 'up':  # independent check of the Catmull-Rom path with PIL, away from the edges
            pil = np.stack([np.asarray(Image.fromarray(img[:, :, c].astype(np.float32), mode='F')
                                       .resize((ow, oh), Image.BICUBIC)) for c in range(3)], axis=2)
            inner = (slice(8, oh - 8), slice(8, ow - 8))
            worst = np.abs(pil[inner] - raw[inner]).max()
            print(f'resize up: PIL BICUBIC (float mode) vs numpy Catmull-Rom, interior pixels: max |diff| {worst:.2e}')
            assert worst < 1e-3, worst


def main():
    write_svhn()
    write_cifar10c()
    write_cifar100()
    write_resize()
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print('wrote', OUT, total, 'bytes')


if __name__ == '__main__':
    main()
