#pragma once
// Building blocks the corruptions share, each defined as the library call of make_cifar_c.py it stands for
// (scipy.ndimage, scikit-image, OpenCV), computed in double on one plane at a time. Where a later step of a
// corruption truncates or thresholds, the arithmetic order follows the library's, so both see the same bits.
#include <vector>

#include "datasets/corruptions.h"

namespace cw::data::corruption {

// One channel (or one random layer) in double.
struct Plane {
    int h = 0, w = 0;
    std::vector<double> v;

    Plane() = default;
    Plane(int height, int width, double fill = 0.0) : h(height), w(width), v(size_t(height) * width, fill) {}
    double& at(int y, int x) { return v[size_t(y) * w + x]; }
    double at(int y, int x) const { return v[size_t(y) * w + x]; }
};

std::vector<Plane> planes_of(const ChwImage& image);
// The planes as an image, each value clipped to [0, 1] (every corruption ends with the script's np.clip).
ChwImage image_of(const std::vector<Plane>& planes);
Plane plane_of(const std::vector<float>& values, int height, int width);

// How an index outside [0, n) folds back in.
enum class Border {
    Nearest,  // a a | a b c d | d d   scipy 'nearest' (skimage's gaussian default), OpenCV BORDER_REPLICATE
    Reflect,  // b a | a b c d | d c   scipy 'reflect' (half-sample symmetric)
    Mirror,   // c b | a b c d | c b   scipy 'mirror', OpenCV BORDER_REFLECT_101 (OpenCV's default)
};
int fold(int i, int n, Border border);

// Rec.601 luma, OpenCV's RGB2GRAY weights; also the gray the corruptions use for a non-RGB image's colours.
constexpr double kLuma[3] = {0.299, 0.587, 0.114};

// numpy's sum of a double array (its first element plus the pairwise sum of the rest), bit for bit.
double numpy_sum(const std::vector<double>& a);

// scipy.ndimage.gaussian_filter in 2-D, as skimage.filters.gaussian calls it per channel: radius
// int(truncate * sigma + 0.5), taps exp(-x^2 / (2 sigma^2)) normalised, along y then x, sigma 0 copies.
// `float_storage`: round each pass to float32, as scipy does for a float32 array.
Plane gaussian_filter(const Plane& p, double sigma, Border border, double truncate = 4.0, bool float_storage = false);

// 2-D correlation (scipy.ndimage.correlate, OpenCV filter2D) with an odd kh x kw kernel, row-major.
Plane correlate(const Plane& p, const std::vector<double>& kernel, int kh, int kw, Border border);

// scipy.ndimage.zoom(order=1) to out_h x out_w: corner pixels on corner pixels, linear interpolation. A coordinate
// that overshoots the last pixel by round-off is clamped to it (scipy's 'constant' mode would give 0 there).
Plane zoom_linear(const Plane& p, int out_h, int out_w);
// make_cifar_c.py's clipped_zoom, per axis: the centre ceil(n / z) zoomed by z, of which the centre n is kept.
Plane clipped_zoom(const Plane& p, double z);

// ImageMagick 6's MotionBlurImage: a one-sided Gaussian of width 2 ceil(radius) + 1 (its
// GetOptimalKernelWidth1D for radius > 0) along `angle_degrees`, each tap at the pixel offset
// ceil(i cos(a) - 0.5), ceil(i sin(a) - 0.5), edge pixels repeated outside (its default virtual pixels).
Plane motion_blur(const Plane& p, double radius, double sigma, double angle_degrees);

// make_cifar_c.py's plasma_fractal (diamond-square) on an n x n map, n a power of two, normalised to [0, 1];
// `uniforms` are its draws in [0, 1), in its order; plasma_draws(n) of them.
Plane plasma_fractal(int n, double wibble_decay, const std::vector<float>& uniforms);
size_t plasma_draws(int n);
int plasma_size(int height, int width);  // the smallest power of two >= both, and >= 2

}  // namespace cw::data::corruption
