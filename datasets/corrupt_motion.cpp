// ImageMagick 6's MotionBlurImage (magick/effect.c), which make_cifar_c.py reaches through Wand for motion_blur
// and snow. We cannot link ImageMagick, so this is its definition in double: the same kernel, the same offsets,
// the same edge rule, without its 16-bit quantum and the 8-bit PNG it writes back (docs/corruptions.md).
#include <cmath>

#include "datasets/corrupt_filters.h"

namespace cw::data::corruption {

Plane motion_blur(const Plane& p, double radius, double sigma, double angle_degrees) {
    // GetOptimalKernelWidth1D with a positive radius; the kernel is the right half of a Gaussian, normalised.
    const int width = static_cast<int>(2.0 * std::ceil(radius) + 1.0);
    const double s = std::fabs(sigma) < 1e-12 ? 1e-12 : sigma;  // ImageMagick's MagickSigma guard
    std::vector<double> kernel(width);
    double total = 0.0;
    for (int i = 0; i < width; ++i) {
        kernel[i] = std::exp(-(double(i) * i) / (2.0 * s * s)) / (2.50662827463100024161235523934010416269302368164062 * s);
        total += kernel[i];
    }
    for (double& k : kernel) k /= total;
    // The taps step along (cos a, sin a) with y growing downwards, rounded half up, as ImageMagick computes them.
    const double a = M_PI * angle_degrees / 180.0;
    const double px = width * std::sin(a), py = width * std::cos(a), len = std::hypot(px, py);
    std::vector<int> ox(width), oy(width);
    for (int i = 0; i < width; ++i) {
        ox[i] = static_cast<int>(std::ceil(double(i) * py / len - 0.5));
        oy[i] = static_cast<int>(std::ceil(double(i) * px / len - 0.5));
    }
    Plane out(p.h, p.w);
    for (int y = 0; y < p.h; ++y)
        for (int x = 0; x < p.w; ++x) {
            double acc = 0.0;
            for (int i = 0; i < width; ++i)
                acc += kernel[i] * p.at(fold(y + oy[i], p.h, Border::Nearest), fold(x + ox[i], p.w, Border::Nearest));
            out.at(y, x) = acc;
        }
    return out;
}

}  // namespace cw::data::corruption
