// elastic_transform: a random affine warp (OpenCV's warpAffine), then a smooth random displacement field
// (scipy's map_coordinates). make_cifar_c.py writes its constants as fractions of IMSIZE = 32; we take them as
// fractions of the image's shorter side, so a 32x32 image gets exactly the script's values.
#include <algorithm>
#include <cmath>
#include <utility>

#include "datasets/corrupt_filters.h"
#include "datasets/corrupt_kinds.h"
#include "datasets/error.h"

namespace cw::data::corruption {

namespace {

struct Elastic {
    double alpha, sigma, affine;  // displacement scale, its smoothing, affine jitter; times the shorter side
};
constexpr Elastic kElastic[5] = {{0, 0, 0.08}, {0.05, 0.2, 0.07}, {0.08, 0.06, 0.06}, {0.1, 0.04, 0.05}, {0.1, 0.03, 0.03}};

CorruptionField elastic_field(int, int, int h, int w, cw::Rng& rng) {
    CorruptionField f;
    auto fill = [&](const char* name, size_t n) {
        auto& u = f.arrays[name];
        u.resize(n);
        rng.fill_uniform(u.data(), u.size(), 0.f, 1.f);
    };
    fill("affine", 6);
    fill("dx", size_t(h) * w);
    fill("dy", size_t(h) * w);
    return f;
}

// cv2.getAffineTransform: the 2x3 matrix taking src[i] to dst[i], from the 6x6 system, by Gaussian elimination
// with partial pivoting.
void affine_from_points(const double src[3][2], const double dst[3][2], double m[6]) {
    double a[6][7] = {};
    for (int i = 0; i < 3; ++i) {
        double* r0 = a[2 * i];
        double* r1 = a[2 * i + 1];
        r0[0] = r1[3] = src[i][0];
        r0[1] = r1[4] = src[i][1];
        r0[2] = r1[5] = 1;
        r0[6] = dst[i][0];
        r1[6] = dst[i][1];
    }
    for (int col = 0; col < 6; ++col) {
        int pivot = col;
        for (int r = col + 1; r < 6; ++r)
            if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
        if (a[pivot][col] == 0) throw DataError("elastic_transform: the affine points are collinear");
        std::swap(a[col], a[pivot]);
        for (int r = col + 1; r < 6; ++r) {
            const double k = a[r][col] / a[col][col];
            for (int c = col; c < 7; ++c) a[r][c] -= k * a[col][c];
        }
    }
    for (int r = 5; r >= 0; --r) {
        double v = a[r][6];
        for (int c = r + 1; c < 6; ++c) v -= a[r][c] * m[c];
        m[r] = v / a[r][r];
    }
}

// cv2.warpAffine(img, m, border reflect-101), bilinear, on a float32 image: OpenCV inverts m, maps each output
// pixel to the source in fixed point (10 fractional bits, then rounded to 1/32 pixel) and interpolates with the
// weights of that 1/32 grid. Matching it this far keeps us within float32 round-off of OpenCV.
Plane warp_affine(const Plane& p, const double m[6]) {
    double d = m[0] * m[4] - m[1] * m[3];
    d = d != 0 ? 1.0 / d : 0.0;
    const double a11 = m[4] * d, a22 = m[0] * d, a12 = -m[1] * d, a21 = -m[3] * d;
    const double b1 = -a11 * m[2] - a12 * m[5], b2 = -a21 * m[2] - a22 * m[5];
    auto fix = [](double v) { return static_cast<int64_t>(std::nearbyint(v)); };
    Plane out(p.h, p.w);
    for (int y = 0; y < p.h; ++y) {
        const int64_t x0 = fix((a12 * y + b1) * 1024) + 16, y0 = fix((a22 * y + b2) * 1024) + 16;
        for (int x = 0; x < p.w; ++x) {
            const int64_t fx = (x0 + fix(a11 * x * 1024)) >> 5, fy = (y0 + fix(a21 * x * 1024)) >> 5;
            const int ix = static_cast<int>(fx >> 5), iy = static_cast<int>(fy >> 5);
            const float tx = float(fx & 31) / 32.f, ty = float(fy & 31) / 32.f;
            const double wx[2] = {1.f - tx, tx}, wy[2] = {1.f - ty, ty};
            double acc = 0;
            for (int a = 0; a < 2; ++a)
                for (int b = 0; b < 2; ++b)
                    acc += wy[a] * wx[b] * p.at(fold(iy + a, p.h, Border::Mirror), fold(ix + b, p.w, Border::Mirror));
            out.at(y, x) = static_cast<float>(acc);
        }
    }
    return out;
}

// scipy's map_coordinates(order=1, mode='reflect') at (y + dy, x + dx): linear interpolation of the image
// extended by half-sample reflection.
Plane displace(const Plane& p, const std::vector<float>& dx, const std::vector<float>& dy) {
    Plane out(p.h, p.w);
    for (int y = 0; y < p.h; ++y)
        for (int x = 0; x < p.w; ++x) {
            const size_t i = size_t(y) * p.w + x;
            const double cy = y + double(dy[i]), cx = x + double(dx[i]);
            const double fy = std::floor(cy), fx = std::floor(cx);
            const double ty = cy - fy, tx = cx - fx;
            const int y0 = static_cast<int>(fy), x0 = static_cast<int>(fx);
            const int ya = fold(y0, p.h, Border::Reflect), yb = fold(y0 + 1, p.h, Border::Reflect);
            const int xa = fold(x0, p.w, Border::Reflect), xb = fold(x0 + 1, p.w, Border::Reflect);
            double acc = 0;
            acc += p.at(ya, xa) * (1 - ty) * (1 - tx);
            acc += p.at(ya, xb) * (1 - ty) * tx;
            acc += p.at(yb, xa) * ty * (1 - tx);
            acc += p.at(yb, xb) * ty * tx;
            out.at(y, x) = static_cast<float>(acc);
        }
    return out;
}

// dx or dy: uniform(-1, 1) smoothed by skimage's gaussian (border 'reflect', truncate 3), times alpha, float32.
std::vector<float> displacement(const std::vector<float>& u, int h, int w, double sigma, double alpha) {
    Plane p(h, w);
    for (size_t i = 0; i < p.v.size(); ++i) p.v[i] = -1 + 2 * double(u[i]);
    p = gaussian_filter(p, sigma, Border::Reflect, 3.0);
    std::vector<float> out(p.v.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(p.v[i] * alpha);
    return out;
}

ChwImage elastic_transform(const ChwImage& x, int s, const CorruptionField& f) {
    const int h = x.height, w = x.width, size = std::min(h, w);
    const double alpha = size * kElastic[s - 1].alpha, sigma = size * kElastic[s - 1].sigma;
    const double jitter = size * kElastic[s - 1].affine;
    const auto& u = f.get("elastic_transform", "affine", 6);
    // Three points around the centre (the script's, in float32), each moved by uniform(-jitter, jitter).
    // (An image under 3 pixels would put all three points on one; the script never sees one, we take 1.)
    const float cx = float(w / 2), cy = float(h / 2), sq = float(std::max(1, size / 3));
    const float from[3][2] = {{cx + sq, cy + sq}, {cx + sq, cy - sq}, {cx - sq, cy - sq}};
    double src[3][2], dst[3][2];
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 2; ++k) {
            src[i][k] = from[i][k];
            dst[i][k] = from[i][k] + static_cast<float>(-jitter + (2 * jitter) * double(u[2 * i + k]));
        }
    double m[6];
    affine_from_points(src, dst, m);
    const std::vector<float> dx = displacement(f.get("elastic_transform", "dx", size_t(h) * w), h, w, sigma, alpha);
    const std::vector<float> dy = displacement(f.get("elastic_transform", "dy", size_t(h) * w), h, w, sigma, alpha);
    std::vector<Plane> planes = planes_of(x);
    for (Plane& p : planes) p = displace(warp_affine(p, m), dx, dy);
    return image_of(planes);
}

}  // namespace

std::vector<Kind> elastic_kinds() { return {{"elastic_transform", elastic_field, elastic_transform}}; }

}  // namespace cw::data::corruption
