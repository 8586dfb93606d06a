#include "datasets/corrupt_filters.h"

#include <algorithm>
#include <cmath>

namespace cw::data::corruption {

std::vector<Plane> planes_of(const ChwImage& image) {
    std::vector<Plane> planes(image.channels, Plane(image.height, image.width));
    for (int c = 0; c < image.channels; ++c)
        for (size_t i = 0; i < image.plane_size(); ++i) planes[c].v[i] = image.pixels[c * image.plane_size() + i];
    return planes;
}

ChwImage image_of(const std::vector<Plane>& planes) {
    ChwImage out(static_cast<int>(planes.size()), planes[0].h, planes[0].w);
    for (size_t c = 0; c < planes.size(); ++c)
        for (size_t i = 0; i < out.plane_size(); ++i)
            out.pixels[c * out.plane_size() + i] = static_cast<float>(std::clamp(planes[c].v[i], 0.0, 1.0));
    return out;
}

Plane plane_of(const std::vector<float>& values, int height, int width) {
    Plane p(height, width);
    for (size_t i = 0; i < p.v.size(); ++i) p.v[i] = values[i];
    return p;
}

int fold(int i, int n, Border border) {
    if (i >= 0 && i < n) return i;
    if (n == 1) return 0;
    switch (border) {
        case Border::Nearest:
            return i < 0 ? 0 : n - 1;
        case Border::Reflect: {
            const int period = 2 * n;
            int k = ((i % period) + period) % period;
            return k < n ? k : period - 1 - k;
        }
        case Border::Mirror: {
            const int period = 2 * n - 2;
            int k = ((i % period) + period) % period;
            return k < n ? k : period - k;
        }
    }
    return 0;
}

double numpy_sum(const std::vector<double>& a) {
    // numpy reduces by taking the first element, then adding the pairwise sum of the others: below 8 elements a
    // plain loop from 0, up to 128 eight running sums combined as a tree, then the remainder in order.
    if (a.empty()) return 0.0;
    const size_t n = a.size() - 1;
    const double* p = a.data() + 1;
    double rest = 0.0;
    if (n < 8) {
        for (size_t i = 0; i < n; ++i) rest += p[i];
    } else {
        double r[8];
        for (int j = 0; j < 8; ++j) r[j] = p[j];
        size_t i = 8;
        for (; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; ++j) r[j] += p[i + j];
        rest = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i) rest += p[i];
    }
    return a[0] + rest;
}

namespace {

std::vector<double> gaussian_taps(double sigma, int radius) {
    std::vector<double> phi(2 * radius + 1);
    const double scale = -0.5 / (sigma * sigma);
    for (int x = -radius; x <= radius; ++x) phi[x + radius] = std::exp(scale * double(x * x));
    const double total = numpy_sum(phi);
    for (double& t : phi) t /= total;
    return phi;
}

// scipy's correlate1d for a symmetric kernel: the centre tap, then each pair of taps from the outermost in.
void symmetric_pass(const double* in, double* out, int n, int stride, const std::vector<double>& taps, Border border,
                    bool float_storage) {
    const int r = static_cast<int>(taps.size()) / 2;
    std::vector<double> line(n + 2 * r);
    for (int i = -r; i < n + r; ++i) line[i + r] = in[size_t(fold(i, n, border)) * stride];
    for (int i = 0; i < n; ++i) {
        const double* x = line.data() + i + r;
        double acc = x[0] * taps[r];
        for (int d = r; d >= 1; --d) acc += (x[-d] + x[d]) * taps[r - d];
        out[size_t(i) * stride] = float_storage ? double(float(acc)) : acc;
    }
}

}  // namespace

Plane gaussian_filter(const Plane& p, double sigma, Border border, double truncate, bool float_storage) {
    if (!(sigma > 1e-15)) return p;  // scipy skips an axis whose sigma is 0
    const int radius = static_cast<int>(truncate * sigma + 0.5);
    const std::vector<double> taps = gaussian_taps(sigma, radius);
    Plane down(p.h, p.w), out(p.h, p.w);
    for (int x = 0; x < p.w; ++x) symmetric_pass(&p.v[x], &down.v[x], p.h, p.w, taps, border, float_storage);
    for (int y = 0; y < p.h; ++y)
        symmetric_pass(&down.v[size_t(y) * p.w], &out.v[size_t(y) * p.w], p.w, 1, taps, border, float_storage);
    return out;
}

Plane correlate(const Plane& p, const std::vector<double>& kernel, int kh, int kw, Border border) {
    // Only the non-zero taps, in row-major order (scipy skips zero weights too): defocus's 17x17 disk has a few.
    struct Tap {
        int dy, dx;
        double w;
    };
    std::vector<Tap> taps;
    for (int i = 0; i < kh; ++i)
        for (int j = 0; j < kw; ++j)
            if (kernel[size_t(i) * kw + j] != 0.0) taps.push_back({i - kh / 2, j - kw / 2, kernel[size_t(i) * kw + j]});
    Plane out(p.h, p.w);
    for (int y = 0; y < p.h; ++y)
        for (int x = 0; x < p.w; ++x) {
            double acc = 0.0;
            for (const Tap& t : taps) acc += p.at(fold(y + t.dy, p.h, border), fold(x + t.dx, p.w, border)) * t.w;
            out.at(y, x) = acc;
        }
    return out;
}

namespace {

struct Tap {
    int lo, hi;     // the two source indices
    double w0, w1;  // their weights
};

// Source taps of every output index along one axis, scipy's way: coordinate k * (n_in - 1) / (n_out - 1).
std::vector<Tap> zoom_taps(int n_in, int n_out) {
    const double step = n_out > 1 ? double(n_in - 1) / double(n_out - 1) : 1.0;
    std::vector<Tap> taps(n_out);
    for (int k = 0; k < n_out; ++k) {
        const double c = std::clamp(double(k) * step, 0.0, double(n_in - 1));
        const int start = static_cast<int>(std::floor(c));
        const double t = c - start;
        taps[k] = {start, fold(start + 1, n_in, Border::Mirror), 1.0 - t, t};
    }
    return taps;
}

}  // namespace

Plane zoom_linear(const Plane& p, int out_h, int out_w) {
    const std::vector<Tap> ty = zoom_taps(p.h, out_h), tx = zoom_taps(p.w, out_w);
    Plane out(out_h, out_w);
    for (int y = 0; y < out_h; ++y)
        for (int x = 0; x < out_w; ++x) {
            const Tap& a = ty[y];
            const Tap& b = tx[x];
            double acc = 0.0;  // scipy's order: (lo, lo), (lo, hi), (hi, lo), (hi, hi), each value * wy * wx
            acc += p.at(a.lo, b.lo) * a.w0 * b.w0;
            acc += p.at(a.lo, b.hi) * a.w0 * b.w1;
            acc += p.at(a.hi, b.lo) * a.w1 * b.w0;
            acc += p.at(a.hi, b.hi) * a.w1 * b.w1;
            out.at(y, x) = acc;
        }
    return out;
}

Plane clipped_zoom(const Plane& p, double z) {
    const int ch = static_cast<int>(std::ceil(p.h / z)), cw = static_cast<int>(std::ceil(p.w / z));
    const int top = (p.h - ch) / 2, left = (p.w - cw) / 2;
    Plane crop(ch, cw);
    for (int y = 0; y < ch; ++y)
        for (int x = 0; x < cw; ++x) crop.at(y, x) = p.at(top + y, left + x);
    // scipy's output size: Python's round (half to even) of size * zoom.
    const Plane big = zoom_linear(crop, static_cast<int>(std::nearbyint(ch * z)), static_cast<int>(std::nearbyint(cw * z)));
    const int ty = (big.h - p.h) / 2, tx = (big.w - p.w) / 2;
    Plane out(p.h, p.w);
    for (int y = 0; y < p.h; ++y)
        for (int x = 0; x < p.w; ++x) out.at(y, x) = big.at(ty + y, tx + x);
    return out;
}

}  // namespace cw::data::corruption
