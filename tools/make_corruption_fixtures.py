#!/usr/bin/python3
"""Writes tests/fixtures/corruptions/: the CIFAR-10-C corruptions of Hendrycks & Dietterich's make_cifar_c.py
computed in numpy/scipy/scikit-image/PIL on a few fixed images, with the random numbers each one used, so that
tests/test_corruptions_reference.cpp can feed our C++ (datasets/corruptions.h) the same random field and compare.

Not part of the build or the tests; needs Debian's python3-numpy, python3-scipy, python3-skimage and python3-pil:
    /usr/bin/python3 tools/make_corruption_fixtures.py                 # writes the fixtures
    /usr/bin/python3 tools/make_corruption_fixtures.py --check-originals
The second form needs python3-opencv and python3-wand as well (not project dependencies): it compares our numpy
stand-ins for the OpenCV and ImageMagick calls of make_cifar_c.py with the real libraries and prints the largest
difference of each (docs/corruptions.md quotes them).

Written from the script's semantics, not its code. Where make_cifar_c.py calls OpenCV or ImageMagick (which our
C++ cannot use) this file re-implements the call in numpy the way the C++ does, and --check-originals shows how
close that is. Where we substitute on purpose (frost's photographs; see docs/corruptions.md) this file implements
the same substitute. Everything else calls what the script calls (skimage gaussian/rgb2hsv/hsv2rgb, scipy
zoom/map_coordinates, PIL resize and JPEG), with the random draws fed in as fields: the Poisson count through
scipy.stats.poisson.ppf of a uniform, salt and pepper by skimage 0.19's random_noise rule (checked against it).

Conventions of the files (all little-endian .npy):
  images.npy          float32 [4, 3, 32, 32]  the inputs, CHW, exact multiples of 1/255: a colour gradient, flat
                      shapes with hard edges, a fine checkerboard with a ramp, and CIFAR-10 test image 0 (a cat).
  gray.npy            float32 [1, 24, 20]     one non-square grayscale input (shapes + ramp).
  <name>/s<k>.npy     float32 [C, H, W]       expected output of corruption <name> at severity k on image
                      (i + k) mod 4, i the name's index in CORRUPTIONS, clipped to [0, 1],
                      NOT quantised to uint8 (the script's final np.uint8 is the Dataset-level step).
  <name>/s<k>_<field>.npy                     the random field arrays that output used (layouts: see manifest).
  <name>/gray.npy, <name>/gray_<field>.npy    the same for gray.npy, at severity (i mod 5) + 1.
  manifest.txt        one line per case: `<name> <severity> <input> <field>:<shape> ...` where input is
                      `image:<i>` or `gray`.
Random fields (float32; names as in datasets/corruptions.h):
  normal [C,H,W] standard normals (gaussian_noise, speckle_noise); uniform [C,H,W] in (0,1) (shot_noise, the
  Poisson quantile); flip, salt [C,H,W] in [0,1) (impulse_noise); dx, dy [iterations,H,W] integer offsets
  (glass_blur); angle [1] degrees (motion_blur, snow); normal [H,W] (snow, spatter); plasma [n] in [0,1) (fog,
  frost); style [1] 0..4, shift [1] normal, grain [H,W] normals (frost); affine [3,2], dx, dy [H,W] in [0,1)
  (elastic_transform).
"""
import argparse
import lzma
import os
import sys

import numpy as np
import scipy.ndimage as ndi
import scipy.stats
import skimage.color
import skimage.filters
import skimage.util
from PIL import Image

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures',
                                    'corruptions'))
# The CIFAR-10 test batch from the project's data folder ($CLASSWISE_DATA, else ./data; `make data DATASET=cifar10`).
DATA_DIR = os.environ.get('CLASSWISE_DATA') or os.path.join(os.path.dirname(OUT), '..', '..', 'data')
CIFAR_TEST_NAMES = ['test_batch.bin', 'test.bin', 'test.bin.xz']

# ---- severities: make_cifar_c.py's constants (the CIFAR ones, not ImageNet-C's) -------------------------------
GAUSSIAN_NOISE = [0.04, 0.06, 0.08, 0.09, 0.10]
SHOT_NOISE = [500, 250, 100, 75, 50]
IMPULSE_NOISE = [0.01, 0.02, 0.03, 0.05, 0.07]
SPECKLE_NOISE = [0.06, 0.1, 0.12, 0.16, 0.2]
GAUSSIAN_BLUR = [0.4, 0.6, 0.7, 0.8, 1.0]
GLASS_BLUR = [(0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2)]  # sigma, max_delta, iterations
DEFOCUS_BLUR = [(0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1)]          # radius, alias_blur
MOTION_BLUR = [(6, 1), (6, 1.5), (6, 2), (8, 2), (9, 2.5)]                          # radius, sigma
ZOOM_BLUR_STOP = [1.06, 1.11, 1.16, 1.21, 1.26]                                    # np.arange(1, stop, 0.01)
FOG = [(0.2, 3), (0.5, 3), (0.75, 2.5), (1, 2), (1.5, 1.75)]                       # amount, wibble decay
FROST = [(1, 0.2), (1, 0.3), (0.9, 0.4), (0.85, 0.4), (0.75, 0.45)]                # image weight, frost weight
SNOW = [(0.1, 0.2, 1, 0.6, 8, 3, 0.95), (0.1, 0.2, 1, 0.5, 10, 4, 0.9), (0.15, 0.3, 1.75, 0.55, 10, 4, 0.9),
        (0.25, 0.3, 2.25, 0.6, 12, 6, 0.85), (0.3, 0.3, 1.25, 0.65, 14, 12, 0.8)]
SPATTER = [(0.62, 0.1, 0.7, 0.7, 0.5, 0), (0.65, 0.1, 0.8, 0.7, 0.5, 0), (0.65, 0.3, 1, 0.69, 0.5, 0),
           (0.65, 0.1, 0.7, 0.69, 0.6, 1), (0.65, 0.1, 0.5, 0.68, 0.6, 1)]
CONTRAST = [0.75, 0.5, 0.4, 0.3, 0.15]
BRIGHTNESS = [0.05, 0.1, 0.15, 0.2, 0.3]
SATURATE = [(0.3, 0), (0.1, 0), (1.5, 0), (2, 0.1), (2.5, 0.2)]
JPEG_QUALITY = [80, 65, 58, 50, 40]
PIXELATE = [0.95, 0.9, 0.85, 0.75, 0.65]
ELASTIC = [(0, 0, 0.08), (0.05, 0.2, 0.07), (0.08, 0.06, 0.06), (0.1, 0.04, 0.05), (0.1, 0.03, 0.03)]  # x IMSIZE

LUMA = np.array([0.299, 0.587, 0.114])  # OpenCV's RGB2GRAY weights


def luma(x):
    """Gray of an HWC image: Rec.601 for 3 channels; any other channel count is its own gray, per channel."""
    return x @ LUMA if x.shape[2] == 3 else x


def as_rgb_gray(fn):
    """Colour-space corruptions on an image that is not RGB: each channel as the gray RGB image (v, v, v), whose
    result's luma is kept."""
    def wrapped(x, *args):
        if x.shape[2] == 3:
            return fn(x, *args)
        return np.stack([fn(np.repeat(x[..., c:c + 1], 3, axis=2), *args) @ LUMA for c in range(x.shape[2])], 2)
    return wrapped


def clip01(x):
    return np.clip(x, 0, 1)


# ---- noise ------------------------------------------------------------------------------------------------
def gaussian_noise(x, s, f):
    return clip01(x + f['normal'] * GAUSSIAN_NOISE[s - 1])


def shot_noise(x, s, f):
    c = SHOT_NOISE[s - 1]
    lam = x * c
    # The Poisson draw as its quantile function at a uniform: the smallest k with P(K <= k) >= u.
    k = np.where(lam > 0, scipy.stats.poisson.ppf(f['uniform'], np.maximum(lam, 1e-300)), 0)
    return clip01(k / c)


def impulse_noise(x, s, f):
    # skimage 0.19's 's&p': an element flips when its first uniform is <= amount, to 1 when its second is <= 0.5.
    out = x.copy()
    flipped = f['flip'] <= IMPULSE_NOISE[s - 1]
    out[flipped & (f['salt'] <= 0.5)] = 1
    out[flipped & (f['salt'] > 0.5)] = 0
    return clip01(out)


def speckle_noise(x, s, f):
    return clip01(x + x * f['normal'] * SPECKLE_NOISE[s - 1])


# ---- blur -------------------------------------------------------------------------------------------------
def sk_gaussian(x, sigma, mode='nearest', truncate=4.0):
    """skimage.filters.gaussian as the script calls it: channels (if any) filtered separately."""
    return skimage.filters.gaussian(x, sigma=sigma, mode=mode, truncate=truncate,
                                    channel_axis=-1 if x.ndim == 3 else None)


def gaussian_blur(x, s, f):
    return clip01(sk_gaussian(x, GAUSSIAN_BLUR[s - 1]))


def glass_blur(x, s, f):
    sigma, delta, iterations = GLASS_BLUR[s - 1]
    h, w = x.shape[:2]
    x = np.floor(sk_gaussian(x, sigma) * 255)  # the script's np.uint8(...): truncation
    for it in range(iterations):
        for i in range(h - delta, delta, -1):
            for j in range(w - delta, delta, -1):
                dy, dx = int(f['dy'][it, i, j]), int(f['dx'][it, i, j])
                # The script writes a tuple swap of two numpy views; the second assignment reads the already
                # overwritten first pixel, so the net effect is a copy (checked in check_glass_swap below).
                x[i, j] = x[i + dy, j + dx]
    return clip01(sk_gaussian(x / 255, sigma))


def cv_gaussian_kernel(n, sigma):
    """cv2.getGaussianKernel(n, sigma) for sigma > 0, as float32 (each tap rounded, then normalised)."""
    t = np.exp(-0.5 / (sigma * sigma) * (np.arange(n) - (n - 1) * 0.5) ** 2).astype(np.float32)
    return (t.astype(np.float64) * (1.0 / t.astype(np.float64).sum())).astype(np.float32)


def disk(radius, alias_blur):
    """The script's defocus kernel: an aliased disk on a grid of at least 17x17, blurred by a small Gaussian
    (cv2.GaussianBlur, border reflect-101), in float32 like the script."""
    half, ksize = (8, 3) if radius <= 8 else (int(radius), 5)
    r = np.arange(-half, half + 1)
    xx, yy = np.meshgrid(r, r)
    d = (xx ** 2 + yy ** 2 <= radius ** 2).astype(np.float32)
    d /= d.sum()
    k = cv_gaussian_kernel(ksize, alias_blur)
    d = ndi.correlate1d(d, k, axis=1, mode='mirror')
    return ndi.correlate1d(d, k, axis=0, mode='mirror')


def defocus_blur(x, s, f):
    k = disk(*DEFOCUS_BLUR[s - 1]).astype(np.float64)
    # cv2.filter2D: correlation, border reflect-101 (scipy's 'mirror').
    return clip01(np.stack([ndi.correlate(x[..., c], k, mode='mirror') for c in range(x.shape[2])], 2))


def im_motion_blur(x, radius, sigma, angle):
    """ImageMagick 6's MotionBlurImage on a float HxW(xC) image: a one-sided Gaussian of width 2*ceil(radius)+1
    along the direction `angle` (degrees, clockwise from +x as y grows down), the samples at offsets rounded
    half up, edge pixels repeated outside the image. No 8-bit rounding of the result."""
    width = int(2 * np.ceil(radius) + 1)
    i = np.arange(width, dtype=np.float64)
    k = np.exp(-(i * i) / (2.0 * sigma * sigma)) / (2.50662827463100024161 * sigma)
    k /= k.sum()
    a = np.pi * angle / 180.0
    px, py = width * np.sin(a), width * np.cos(a)
    hyp = np.hypot(px, py)
    ox = np.ceil(i * py / hyp - 0.5).astype(int)
    oy = np.ceil(i * px / hyp - 0.5).astype(int)
    h, w = x.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    out = np.zeros_like(x, dtype=np.float64)
    for j in range(width):
        out += k[j] * x[np.clip(yy + oy[j], 0, h - 1), np.clip(xx + ox[j], 0, w - 1)]
    return out


def motion_blur(x, s, f):
    radius, sigma = MOTION_BLUR[s - 1]
    return clip01(im_motion_blur(x, radius, sigma, float(f['angle'][0])))


def clipped_zoom(x, z):
    """The script's clipped_zoom per axis (the same for a square image): crop the centre ceil(n / z), zoom it by
    z with scipy's order-1 spline (corners on corners), crop the centre n. 'nearest' instead of the script's
    'constant': inside the image they agree; at the far edge scipy 1.10 turns a coordinate that overshoots the
    last pixel by a rounding error into 0 (e.g. 13 pixels at z = 1.04 on 32x32), which the script never meant."""
    h, w = x.shape[:2]
    ch, cw = int(np.ceil(h / z)), int(np.ceil(w / z))
    top, left = (h - ch) // 2, (w - cw) // 2
    zoomed = ndi.zoom(x[top:top + ch, left:left + cw], (z, z) + (1,) * (x.ndim - 2), order=1, mode='nearest')
    t, l = (zoomed.shape[0] - h) // 2, (zoomed.shape[1] - w) // 2
    return zoomed[t:t + h, l:l + w]


def zoom_factors(s):
    return np.arange(1, ZOOM_BLUR_STOP[s - 1], 0.01)  # 7, 12, 16, 21, 26 factors: float arange's length


def zoom_blur(x, s, f):
    x = x.astype(np.float32)
    out = np.zeros_like(x)
    zs = zoom_factors(s)
    for z in zs:
        out += clipped_zoom(x, z)
    return clip01((x + out) / (len(zs) + 1))


# ---- weather ----------------------------------------------------------------------------------------------
def plasma_size(h, w):
    n = 2
    while n < max(h, w):
        n *= 2
    return n


def plasma_count(n):
    """Uniforms a diamond-square map of side n draws: three grids of (n / step)^2 per step."""
    total, step = 0, n
    while step >= 2:
        total += 3 * (n // step) ** 2
        step //= 2
    return total


def plasma_fractal(n, decay, u):
    """The script's diamond-square heightmap (side n, a power of two, wrapping), normalised to [0, 1]; `u` are
    the uniforms it draws, in its order (square centres, then the two diamond grids, per step)."""
    m = np.zeros((n, n))
    step, wibble, used = n, 100.0, 0

    def wibbled_mean(total):
        nonlocal used
        v = u[used:used + total.size].astype(np.float64).reshape(total.shape)
        used += total.size
        return total / 4 + wibble * (-wibble + (2 * wibble) * v)

    while step >= 2:
        half = step // 2
        corners = m[0::step, 0::step]
        square = corners + np.roll(corners, -1, axis=0)
        square = square + np.roll(square, -1, axis=1)
        m[half::step, half::step] = wibbled_mean(square)
        centres, corners = m[half::step, half::step], m[0::step, 0::step]
        left_right = (centres + np.roll(centres, 1, axis=0)) + (corners + np.roll(corners, -1, axis=1))
        m[0::step, half::step] = wibbled_mean(left_right)
        top_bottom = (centres + np.roll(centres, 1, axis=1)) + (corners + np.roll(corners, -1, axis=0))
        m[half::step, 0::step] = wibbled_mean(top_bottom)
        step //= 2
        wibble /= decay
    assert used == u.size
    m -= m.min()
    return m / m.max()


def fog(x, s, f):
    amount, decay = FOG[s - 1]
    h, w = x.shape[:2]
    top = x.max()
    x = x + amount * plasma_fractal(plasma_size(h, w), decay, f['plasma'])[:h, :w, None]
    return clip01(x * top / (top + amount))


# The frost substitute: five styles, one per photograph the script samples (frost1..frost5; frost2 and frost3 are
# the same photograph). Each matches, on 32x32 crops of the photograph scaled by 0.2 as the script scales it, the
# mean colour, the spread of crop means (gray), the within-crop standard deviation per channel and the share of
# pixel-to-pixel ("grain") variation. See docs/corruptions.md.
FROST_STYLES = [  # mean RGB, spread of crop means, within-crop sd RGB, grain share
    ((0.301, 0.581, 0.647), 0.042, (0.083, 0.051, 0.049), 0.65),
    ((0.782, 0.800, 0.836), 0.036, (0.069, 0.070, 0.072), 0.73),
    ((0.782, 0.800, 0.836), 0.036, (0.069, 0.070, 0.072), 0.73),
    ((0.561, 0.619, 0.669), 0.042, (0.101, 0.102, 0.106), 0.81),
    ((0.409, 0.453, 0.499), 0.066, (0.137, 0.136, 0.133), 0.75),
]
FROST_CLOUD_DECAY = 2.0


def frost_texture(h, w, f):
    mean, spread, within, grain_share = FROST_STYLES[int(f['style'][0])]
    cloud = plasma_fractal(plasma_size(h, w), FROST_CLOUD_DECAY, f['plasma'])[:h, :w]
    sd = cloud.std()
    cloud = (cloud - cloud.mean()) / sd if sd > 0 else np.zeros_like(cloud)
    t = np.sqrt(1 - grain_share ** 2) * cloud + grain_share * f['grain'].astype(np.float64)
    shift = spread * float(f['shift'][0])
    return clip01(np.stack([mean[c] + shift + within[c] * t for c in range(3)], 2))


def frost(x, s, f):
    a, b = FROST[s - 1]
    tex = frost_texture(x.shape[0], x.shape[1], f)
    if x.shape[2] != 3:
        tex = np.repeat((tex @ LUMA)[..., None], x.shape[2], axis=2)
    return clip01(a * x + b * tex)


def snow(x, s, f):
    loc, scale, zoom, threshold, radius, sigma, keep = SNOW[s - 1]
    layer = loc + scale * f['normal'].astype(np.float64)
    layer = clipped_zoom(layer[..., None], zoom)[..., 0]
    layer[layer < threshold] = 0
    layer = np.floor(clip01(layer) * 255) / 255  # the script's uint8 for its PNG round trip: truncation
    layer = im_motion_blur(layer, radius, sigma, float(f['angle'][0]))[..., None]
    x = x.astype(np.float32).astype(np.float64)
    x = keep * x + (1 - keep) * np.maximum(x, luma(x).reshape(x.shape[0], x.shape[1], -1) * 1.5 + 0.5)
    return clip01(x + layer + np.rot90(layer, k=2))


# OpenCV stand-ins for spatter, each checked against cv2 by --check-originals.
def cv_canny(img, low, high):
    """cv2.Canny(img, low, high) on uint8: 3x3 Sobel (border replicate), L1 magnitude, non-maximum suppression in
    four directions (22.5-degree sectors), hysteresis over 8-neighbours from magnitudes > high."""
    p = np.pad(img.astype(np.int32), 1, mode='edge')
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    mag = np.abs(gx) + np.abs(gy)
    h, w = img.shape
    m = np.pad(mag, 1)  # zero magnitude outside the image
    tg22 = int(0.4142135623730950488016887242097 * (1 << 15) + 0.5)
    state = np.zeros((h, w), np.int8)  # 0 none, 1 weak, 2 strong
    for y in range(h):
        for x in range(w):
            v = mag[y, x]
            if v <= low:
                continue
            ax, ay = abs(int(gx[y, x])), abs(int(gy[y, x])) << 15
            t22 = ax * tg22
            if ay < t22:
                keep = v > m[y + 1, x] and v >= m[y + 1, x + 2]
            elif ay > t22 + (ax << 16):
                keep = v > m[y, x + 1] and v >= m[y + 2, x + 1]
            else:
                sgn = -1 if (gx[y, x] < 0) != (gy[y, x] < 0) else 1
                keep = v > m[y, x + 1 - sgn] and v > m[y + 2, x + 1 + sgn]
            if keep:
                state[y, x] = 2 if v > high else 1
    stack = list(zip(*np.nonzero(state == 2)))
    while stack:
        y, x = stack.pop()
        for yy in range(max(y - 1, 0), min(y + 2, h)):
            for xx in range(max(x - 1, 0), min(x + 2, w)):
                if state[yy, xx] == 1:
                    state[yy, xx] = 2
                    stack.append((yy, xx))
    return np.where(state == 2, 255, 0).astype(np.uint8)


def cv_distance_l2_5(img):
    """cv2.distanceTransform(img, DIST_L2, 5): distance to the nearest zero pixel by the 5x5 chamfer (weights 1,
    1.4, 2.1969 in 16-bit fixed point), two passes; pixels outside the image are never zero."""
    hv, diag, knight = (int(np.rint(np.float32(v) * np.float64(1 << 16))) for v in (1.0, 1.4, 2.1969))
    h, w = img.shape
    big = 1 << 40
    d = np.full((h + 4, w + 4), big, dtype=np.int64)
    fwd = [(-2, -1, knight), (-2, 1, knight), (-1, -2, knight), (-1, -1, diag), (-1, 0, hv), (-1, 1, diag),
           (-1, 2, knight), (0, -1, hv)]
    for y in range(h):
        for x in range(w):
            if img[y, x] == 0:
                d[y + 2, x + 2] = 0
            else:
                d[y + 2, x + 2] = min(d[y + 2 + dy, x + 2 + dx] + c for dy, dx, c in fwd)
    for y in range(h - 1, -1, -1):
        for x in range(w - 1, -1, -1):
            d[y + 2, x + 2] = min([d[y + 2, x + 2]] + [d[y + 2 - dy, x + 2 - dx] + c for dy, dx, c in fwd])
    return (d[2:-2, 2:-2].astype(np.float64) * (1.0 / (1 << 16))).astype(np.float32)


def cv_blur3_float(img):
    """cv2.blur(img, (3, 3)) on float32: exact 3x3 sums (reflect-101) times 1/9 in double, stored as float32."""
    return (ndi.correlate(img.astype(np.float64), np.ones((3, 3)), mode='mirror') * (1.0 / 9)).astype(np.float32)


def cv_blur3_u8(img):
    """cv2.blur(img, (3, 3)) on uint8: OpenCV's fixed-point division of the 3x3 sum by 9 (it rounds)."""
    s = ndi.correlate(img.astype(np.int64), np.ones((3, 3), np.int64), mode='mirror')
    return (((s + 4) * 7282) >> 16).astype(np.uint8)


def cv_equalize_hist(img):
    hist = np.bincount(img.ravel(), minlength=256)
    first = int(np.nonzero(hist)[0][0])
    if hist[first] == img.size:
        return np.full_like(img, first)
    scale = np.float32(255.0) / np.float32(img.size - hist[first])
    lut = np.zeros(256, np.uint8)
    total = 0
    for i in range(first + 1, 256):
        total += int(hist[i])
        lut[i] = np.clip(np.rint(np.float32(total) * scale), 0, 255)
    return lut[img]


def cv_filter2d_u8(img, kernel):
    """cv2.filter2D(img, CV_8U, integer kernel): the exact sum, saturated to 0..255 (reflect-101)."""
    s = ndi.correlate(img.astype(np.int64), kernel.astype(np.int64), mode='mirror')
    return np.clip(s, 0, 255).astype(np.uint8)


def spatter(x, s, f):
    loc, scale, sigma, threshold, amount, mud = SPATTER[s - 1]
    x = x.astype(np.float32).astype(np.float64)
    liquid = sk_gaussian(loc + scale * f['normal'].astype(np.float64), sigma)
    liquid[liquid < threshold] = 0
    if mud == 0:
        liquid8 = np.floor(liquid * 255).astype(np.uint8)
        dist = cv_distance_l2_5(255 - cv_canny(liquid8, 50, 150))
        dist = np.minimum(dist, np.float32(20))
        dist = cv_blur3_float(dist).astype(np.uint8)  # astype: truncation
        dist = cv_equalize_hist(dist)
        dist = cv_filter2d_u8(dist, np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]]))
        dist = cv_blur3_u8(dist).astype(np.float32)
        m = liquid8.astype(np.float32) * dist
        top = m.max()
        m = (m / top * np.float32(amount)).astype(np.float64) if top > 0 else np.zeros_like(m, np.float64)
        colour = np.array([175, 238, 238]) / 255.0  # pale turquoise, channel order as the script's array
        if x.shape[2] != 3:
            colour = np.full(x.shape[2], colour @ LUMA)
        return clip01(x + m[..., None] * colour)
    m = sk_gaussian((liquid > threshold).astype(np.float32), amount)
    m[m < 0.8] = 0
    m = m.astype(np.float64)[..., None]
    colour = np.array([63, 42, 20]) / 255.0  # mud brown
    if x.shape[2] != 3:
        colour = np.full(x.shape[2], colour @ LUMA)
    return clip01(x * (1 - m) + colour * m)


# ---- digital ----------------------------------------------------------------------------------------------
def contrast(x, s, f):
    means = x.mean(axis=(0, 1), keepdims=True)
    return clip01((x - means) * CONTRAST[s - 1] + means)


@as_rgb_gray
def brightness(x, s, f):
    hsv = skimage.color.rgb2hsv(x)
    hsv[..., 2] = np.clip(hsv[..., 2] + BRIGHTNESS[s - 1], 0, 1)
    return clip01(skimage.color.hsv2rgb(hsv))


@as_rgb_gray
def saturate(x, s, f):
    a, b = SATURATE[s - 1]
    hsv = skimage.color.rgb2hsv(x)
    hsv[..., 1] = np.clip(hsv[..., 1] * a + b, 0, 1)
    return clip01(skimage.color.hsv2rgb(hsv))


def to_u8(x):
    return np.clip(np.rint(x * 255), 0, 255).astype(np.uint8)


def jpeg_compression(x, s, f):
    """PIL's save(quality=q) with its defaults (4:2:0 chroma subsampling for RGB, baseline, libjpeg's islow DCT)
    and PIL's decode; a gray image as a one-component JPEG (PIL mode 'L'), other channel counts per channel."""
    import io

    def roundtrip(img):
        buf = io.BytesIO()
        img.save(buf, 'JPEG', quality=JPEG_QUALITY[s - 1])
        return np.asarray(Image.open(io.BytesIO(buf.getvalue())), dtype=np.float64) / 255

    u8 = to_u8(x)
    if x.shape[2] == 3:
        return roundtrip(Image.fromarray(u8, 'RGB'))
    return np.stack([roundtrip(Image.fromarray(u8[..., c], 'L')) for c in range(x.shape[2])], 2)


def pixelate(x, s, f):
    """PIL resize with BOX down to int(side * c), then BOX back up, in float (PIL mode 'F') per channel."""
    h, w = x.shape[:2]
    c = PIXELATE[s - 1]
    small = (int(w * c), int(h * c))
    out = []
    for ch in range(x.shape[2]):
        img = Image.fromarray(x[..., ch].astype(np.float32), 'F')
        out.append(np.asarray(img.resize(small, Image.BOX).resize((w, h), Image.BOX), dtype=np.float64))
    return clip01(np.stack(out, 2))


def cv_affine_from_points(src, dst):
    """cv2.getAffineTransform: the 2x3 matrix taking the three src points to the dst points (6x6 solve)."""
    a = np.zeros((6, 6))
    b = np.zeros(6)
    for i in range(3):
        a[2 * i, :3] = a[2 * i + 1, 3:] = (src[i, 0], src[i, 1], 1)
        b[2 * i], b[2 * i + 1] = dst[i]
    return np.linalg.solve(a, b).reshape(2, 3)


def reflect101(i, n):
    if n == 1:
        return np.zeros_like(i)
    period = 2 * n - 2
    i = np.abs(i) % period
    return np.where(i >= n, period - i, i)


def cv_warp_affine(img, m):
    """cv2.warpAffine(img, m, (w, h), borderMode=BORDER_REFLECT_101) on float32, bilinear: OpenCV inverts m and
    maps each output pixel in fixed point (10 fractional bits, rounded to 1/32 pixel), then interpolates with the
    weights of that 1/32 grid."""
    d = m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]
    d = 1.0 / d if d != 0 else 0.0
    a11, a22, a12, a21 = m[1, 1] * d, m[0, 0] * d, -m[0, 1] * d, -m[1, 0] * d
    b1 = -a11 * m[0, 2] - a12 * m[1, 2]
    b2 = -a21 * m[0, 2] - a22 * m[1, 2]
    h, w = img.shape[:2]
    xs = np.arange(w)
    ys = np.arange(h)
    adelta = np.rint(a11 * xs * 1024).astype(np.int64)
    bdelta = np.rint(a21 * xs * 1024).astype(np.int64)
    x0 = np.rint((a12 * ys + b1) * 1024).astype(np.int64) + 16
    y0 = np.rint((a22 * ys + b2) * 1024).astype(np.int64) + 16
    fx = (x0[:, None] + adelta[None, :]) >> 5
    fy = (y0[:, None] + bdelta[None, :]) >> 5
    ix, iy = fx >> 5, fy >> 5
    tx = (fx & 31).astype(np.float32) / np.float32(32)
    ty = (fy & 31).astype(np.float32) / np.float32(32)
    wx = np.stack([1 - tx, tx]).astype(np.float64)
    wy = np.stack([1 - ty, ty]).astype(np.float64)
    out = np.zeros(img.shape, np.float64)
    for a in range(2):
        for b in range(2):
            out += (wy[a] * wx[b])[..., None] * img[reflect101(iy + a, h), reflect101(ix + b, w)]
    return out.astype(np.float32)


def elastic_transform(x, s, f):
    h, w = x.shape[:2]
    size = min(h, w)  # the script's IMSIZE (32): constants are fractions of the shorter side
    alpha, sigma, affine = (size * v for v in ELASTIC[s - 1])
    x = x.astype(np.float32)
    cx, cy, sq = np.float32(w // 2), np.float32(h // 2), np.float32(max(1, size // 3))
    pts1 = np.array([[cx + sq, cy + sq], [cx + sq, cy - sq], [cx - sq, cy - sq]], np.float32)
    pts2 = pts1 + (-affine + (2 * affine) * f['affine'].astype(np.float64)).astype(np.float32)
    x = cv_warp_affine(x, cv_affine_from_points(pts1.astype(np.float64), pts2.astype(np.float64)))
    dx = (sk_gaussian(-1 + 2 * f['dx'].astype(np.float64), sigma, mode='reflect', truncate=3) * alpha)
    dy = (sk_gaussian(-1 + 2 * f['dy'].astype(np.float64), sigma, mode='reflect', truncate=3) * alpha)
    dx, dy = dx.astype(np.float32), dy.astype(np.float32)
    yy, xx = np.meshgrid(np.arange(h), np.arange(w), indexing='ij')
    out = np.stack([ndi.map_coordinates(x[..., c], [yy + dy, xx + dx], order=1, mode='reflect')
                    for c in range(x.shape[2])], 2)
    return clip01(out.astype(np.float64))


CORRUPTIONS = {
    'gaussian_noise': gaussian_noise, 'shot_noise': shot_noise, 'impulse_noise': impulse_noise,
    'defocus_blur': defocus_blur, 'glass_blur': glass_blur, 'motion_blur': motion_blur, 'zoom_blur': zoom_blur,
    'snow': snow, 'frost': frost, 'fog': fog, 'brightness': brightness, 'contrast': contrast,
    'elastic_transform': elastic_transform, 'pixelate': pixelate, 'jpeg_compression': jpeg_compression,
    'speckle_noise': speckle_noise, 'gaussian_blur': gaussian_blur, 'spatter': spatter, 'saturate': saturate,
}


# ---- random fields: drawn with numpy, stored as float32, used as stored -----------------------------------
def draw_field(name, s, c, h, w, rng):
    f32 = np.float32
    if name in ('gaussian_noise', 'speckle_noise'):
        return {'normal': rng.standard_normal((c, h, w)).astype(f32)}
    if name == 'shot_noise':
        u = rng.random((c, h, w)).astype(f32)
        return {'uniform': np.where(u > 0, u, f32(0.5))}
    if name == 'impulse_noise':
        return {'flip': rng.random((c, h, w)).astype(f32), 'salt': rng.random((c, h, w)).astype(f32)}
    if name == 'glass_blur':
        _, delta, iterations = GLASS_BLUR[s - 1]
        dx, dy = np.zeros((iterations, h, w), f32), np.zeros((iterations, h, w), f32)
        for it in range(iterations):
            for i in range(h - delta, delta, -1):
                for j in range(w - delta, delta, -1):
                    dx[it, i, j], dy[it, i, j] = rng.integers(-delta, delta, size=2)  # the script's order
        return {'dx': dx, 'dy': dy}
    if name == 'motion_blur':
        return {'angle': np.array([rng.uniform(-45, 45)], f32)}
    if name == 'snow':
        return {'normal': rng.standard_normal((h, w)).astype(f32), 'angle': np.array([rng.uniform(-135, -45)], f32)}
    if name == 'fog':
        return {'plasma': rng.random(plasma_count(plasma_size(h, w))).astype(f32)}
    if name == 'frost':
        return {'style': np.array([rng.integers(5)], f32), 'shift': np.array([rng.standard_normal()], f32),
                'plasma': rng.random(plasma_count(plasma_size(h, w))).astype(f32),
                'grain': rng.standard_normal((h, w)).astype(f32)}
    if name == 'spatter':
        return {'normal': rng.standard_normal((h, w)).astype(f32)}
    if name == 'elastic_transform':
        return {'affine': rng.random((3, 2)).astype(f32), 'dx': rng.random((h, w)).astype(f32),
                'dy': rng.random((h, w)).astype(f32)}
    return {}


def hwc_field(field, c):
    """The stored float32 values as float64 (the script's draws are float64), per-element fields (stored CHW like
    the images) turned HWC as the corruptions above index them."""
    per_element = ('normal', 'uniform', 'flip', 'salt')
    return {k: (v.transpose(1, 2, 0) if v.ndim == 3 and v.shape[0] == c and k in per_element else v).astype(np.float64)
            for k, v in field.items()}


def corrupt(name, x_chw, s, field):
    x = x_chw.transpose(1, 2, 0).astype(np.float64)
    out = CORRUPTIONS[name](x, s, hwc_field(field, x.shape[2]))
    assert out.shape == x.shape, (name, out.shape)
    return np.ascontiguousarray(out.transpose(2, 0, 1)).astype(np.float32)


# ---- the fixed inputs -------------------------------------------------------------------------------------
def synthetic_images():
    y, x = np.mgrid[0:32, 0:32]
    gradient = np.stack([x * 8 + 3, y * 8 + 3, 255 - (x + y) * 4], 2)
    shapes = np.zeros((32, 32, 3))
    shapes[:] = (40, 70, 160)                                             # blue background
    shapes[(x - 11) ** 2 + (y - 12) ** 2 <= 49] = (230, 200, 30)          # yellow disc
    shapes[18:28, 17:29] = (200, 30, 40)                                  # red square
    shapes[4:8, 20:30] = (250, 250, 250)                                  # white bar
    checker = ((x // 2 + y // 2) % 2) * 120 + x * 3 + 20
    checker = np.stack([checker, checker * 0.8 + 30, 200 - checker * 0.5], 2)
    return [np.clip(np.rint(im), 0, 255).astype(np.uint8) for im in (gradient, shapes, checker)]


def cifar_test_file():
    folder = os.path.join(DATA_DIR, 'cifar-10-batches-bin')
    for name in CIFAR_TEST_NAMES:
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    sys.exit('make_corruption_fixtures.py: no CIFAR-10 test batch in %s (tried %s); get it with: make data '
             'DATASET=cifar10, or set CLASSWISE_DATA' % (folder, ', '.join(CIFAR_TEST_NAMES)))


def cifar_image(index=0):
    path = cifar_test_file()
    with (lzma.open(path) if path.endswith('.xz') else open(path, 'rb')) as fh:
        rec = fh.read(3073 * (index + 1))[3073 * index:]
    return np.frombuffer(rec[1:], np.uint8).reshape(3, 32, 32).transpose(1, 2, 0)


def gray_image():
    y, x = np.mgrid[0:24, 0:20]
    g = 30 + x * 6 + y * 2
    g[(x - 8) ** 2 + (y - 10) ** 2 <= 20] = 220
    g[15:21, 12:18] = 10
    return np.clip(g, 0, 255).astype(np.uint8)[..., None]


def chw01(u8_hwc):
    return (u8_hwc.transpose(2, 0, 1).astype(np.float32) / np.float32(255))


# ---- checks against the original libraries ----------------------------------------------------------------
def check_originals():
    import ctypes
    import io

    import cv2
    from wand.api import library as wandlibrary
    from wand.image import Image as WandImage

    rng = np.random.default_rng(7)
    imgs = [chw01(im).transpose(1, 2, 0).astype(np.float64) for im in synthetic_images() + [cifar_image()]]
    worst = {}

    def note(what, diff):
        worst[what] = max(worst.get(what, 0.0), float(diff))

    # defocus: the kernel and the filter.
    for s in range(1, 6):
        r, a = DEFOCUS_BLUR[s - 1]
        lin = np.arange(-8, 9)
        xx, yy = np.meshgrid(lin, lin)
        d = np.array((xx ** 2 + yy ** 2) <= r ** 2, dtype=np.float32)
        d /= np.sum(d)
        ref = cv2.GaussianBlur(d, ksize=(3, 3), sigmaX=a)
        note('defocus kernel vs cv2.GaussianBlur', np.abs(disk(r, a) - ref).max())
        for x in imgs:
            got = defocus_blur(x, s, {})
            want = np.clip(np.stack([cv2.filter2D(x[..., c], -1, ref) for c in range(3)], 2), 0, 1)
            note('defocus_blur vs cv2.filter2D', np.abs(got - want).max())
    # elastic: the affine warp.
    for s in range(1, 6):
        for x in imgs:
            x32 = x.astype(np.float32)
            f = draw_field('elastic_transform', s, 3, 32, 32, rng)
            aff = 32 * ELASTIC[s - 1][2]
            pts1 = np.float32([[26, 26], [26, 6], [6, 6]])
            pts2 = pts1 + (-aff + 2 * aff * f['affine'].astype(np.float64)).astype(np.float32)
            m_ref = cv2.getAffineTransform(pts1, pts2)
            m_got = cv_affine_from_points(pts1.astype(np.float64), pts2.astype(np.float64))
            note('affine matrix vs cv2.getAffineTransform', np.abs(m_ref - m_got).max())
            want = cv2.warpAffine(x32, m_ref, (32, 32), borderMode=cv2.BORDER_REFLECT_101)
            note('affine warp vs cv2.warpAffine', np.abs(cv_warp_affine(x32, m_ref) - want).max())
    # snow: the gray conversion.
    for x in imgs:
        x32 = x.astype(np.float32)
        note('gray vs cv2.cvtColor', np.abs(luma(x32.astype(np.float64)) - cv2.cvtColor(x32, cv2.COLOR_RGB2GRAY)).max())
    # spatter: every OpenCV step on the layers the script makes.
    for trial in range(40):
        s = 1 + trial % 3
        loc, scale, sigma, threshold, _, _ = SPATTER[s - 1]
        liquid = sk_gaussian(rng.normal(loc, scale, (32, 32)), sigma)
        liquid[liquid < threshold] = 0
        l8 = (liquid * 255).astype(np.uint8)
        e_ref = cv2.Canny(l8, 50, 150)
        note('canny vs cv2.Canny (pixels differing)', (cv_canny(l8, 50, 150) != e_ref).sum())
        d_ref = cv2.distanceTransform(255 - e_ref, cv2.DIST_L2, 5)
        note('distance vs cv2.distanceTransform', np.abs(cv_distance_l2_5(255 - e_ref) - np.minimum(d_ref, 1e6)).max()
             if (e_ref > 0).any() else 0)
        _, d_ref = cv2.threshold(d_ref, 20, 20, cv2.THRESH_TRUNC)
        b_ref = cv2.blur(d_ref, (3, 3))
        note('float box blur vs cv2.blur', np.abs(cv_blur3_float(d_ref) - b_ref).max())
        b_ref = b_ref.astype(np.uint8)
        q_ref = cv2.equalizeHist(b_ref)
        note('equalizeHist vs cv2 (levels)', np.abs(cv_equalize_hist(b_ref).astype(int) - q_ref).max())
        ker = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]])
        k_ref = cv2.filter2D(q_ref, cv2.CV_8U, ker)
        note('filter2D u8 vs cv2 (levels)', np.abs(cv_filter2d_u8(q_ref, ker).astype(int) - k_ref).max())
        note('uint8 box blur vs cv2.blur (levels)', np.abs(cv_blur3_u8(k_ref).astype(int) - cv2.blur(k_ref, (3, 3))).max())
    for v in range(0, 9 * 255 + 1):  # every 3x3 sum the u8 blur can see
        img = np.zeros((3, 3), np.uint8)
        flat = img.ravel()
        for i in range(9):
            flat[i] = min(255, max(0, v - 255 * i))
        note('uint8 box blur, all sums (levels)', abs(int(cv_blur3_u8(img)[1, 1]) - int(cv2.blur(img, (3, 3))[1, 1])))
    # motion blur through ImageMagick (Wand), the script's way: PNG in, 8-bit PNG out.
    wandlibrary.MagickMotionBlurImage.argtypes = (ctypes.c_void_p, ctypes.c_double, ctypes.c_double, ctypes.c_double)

    def im_real(u8, radius, sigma, angle):
        buf = io.BytesIO()
        Image.fromarray(u8).save(buf, format='PNG')
        with WandImage(blob=buf.getvalue()) as im:
            wandlibrary.MagickMotionBlurImage(im.wand, radius, sigma, angle)
            out = cv2.imdecode(np.frombuffer(im.make_blob(), np.uint8), cv2.IMREAD_UNCHANGED)
        return (out[..., ::-1] if out.ndim == 3 else out).astype(np.float64) / 255

    for (radius, sigma) in MOTION_BLUR + [c[4:6] for c in SNOW]:
        for x in imgs:
            angle = rng.uniform(-135, 45)
            got = im_motion_blur(x, radius, sigma, angle)
            want = im_real(to_u8(x), radius, sigma, angle)
            note('motion blur vs ImageMagick (|ours - IM|, IM writes 8 bits)', np.abs(got - want).max())
            # ImageMagick rounds to its 16-bit quantum, and the 8-bit PNG it writes truncates that.
            quantised = np.floor(np.floor(got * 255 * 257 + 0.5) / 257)
            note('motion blur: IM == floor(round(257 * 255 ours) / 257) (pixels differing)',
                 (quantised != np.rint(want * 255)).sum())
    # glass blur: the script's tuple swap of numpy views is a copy.
    x = np.arange(4 * 4 * 3, dtype=np.float64).reshape(4, 4, 3)
    y = x.copy()
    x[2, 2], x[1, 1] = x[1, 1], x[2, 2]
    y[2, 2] = y[1, 1]
    note('glass blur: tuple swap == copy (0 = yes)', np.abs(x - y).max())
    # impulse noise: skimage's own random_noise with the same generator.
    for s in range(1, 6):
        x = imgs[s % 4]
        u = np.random.default_rng(100 + s)
        field = {'flip': u.random(x.shape), 'salt': u.random(x.shape)}
        want = skimage.util.random_noise(x, mode='s&p', seed=np.random.default_rng(100 + s), amount=IMPULSE_NOISE[s - 1])
        note('impulse_noise vs skimage.util.random_noise', np.abs(impulse_noise(x, s, field) - want).max())
    for k in sorted(worst):
        print(f'{worst[k]:.3g}\t{k}')


# ---- writing ----------------------------------------------------------------------------------------------
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--check-originals', action='store_true')
    args = parser.parse_args()
    if args.check_originals:
        check_originals()
        return
    os.makedirs(OUT, exist_ok=True)
    images = np.stack([chw01(im) for im in synthetic_images() + [cifar_image(0)]])
    gray = chw01(gray_image())
    np.save(f'{OUT}/images.npy', images)
    np.save(f'{OUT}/gray.npy', gray)
    rng = np.random.default_rng(20240611)
    lines = []
    names = list(CORRUPTIONS)
    for n, name in enumerate(names):
        os.makedirs(f'{OUT}/{name}', exist_ok=True)
        cases = [(s, f'image:{(n + s) % len(images)}', images[(n + s) % len(images)], f's{s}') for s in range(1, 6)]
        cases.append((n % 5 + 1, 'gray', gray, 'gray'))  # every severity appears among the gray cases
        for s, label, x, stem in cases:
            field = draw_field(name, s, *x.shape, rng)
            out = corrupt(name, x, s, field)
            np.save(f'{OUT}/{name}/{stem}.npy', out)
            desc = []
            for k, v in field.items():
                np.save(f'{OUT}/{name}/{stem}_{k}.npy', v)
                desc.append(f'{k}:' + 'x'.join(map(str, v.shape)))
            lines.append(' '.join([name, str(s), label] + desc))
    with open(f'{OUT}/manifest.txt', 'w') as fh:
        fh.write('# name severity input fields (see tools/make_corruption_fixtures.py)\n')
        fh.write('\n'.join(lines) + '\n')
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f'wrote {len(lines)} cases to {OUT} ({total / 1e6:.2f} MB)')


if __name__ == '__main__':
    main()
