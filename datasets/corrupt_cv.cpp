#include "datasets/corrupt_cv.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "datasets/corrupt_filters.h"

namespace cw::data::corruption {

std::vector<uint8_t> cv_canny(const std::vector<uint8_t>& img, int h, int w, int low, int high) {
    auto px = [&](int y, int x) { return int(img[size_t(fold(y, h, Border::Nearest)) * w + fold(x, w, Border::Nearest)]); };
    std::vector<int> gx(size_t(h) * w), gy(gx.size()), mag(gx.size());
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const size_t i = size_t(y) * w + x;
            gx[i] = (px(y - 1, x + 1) + 2 * px(y, x + 1) + px(y + 1, x + 1)) -
                    (px(y - 1, x - 1) + 2 * px(y, x - 1) + px(y + 1, x - 1));
            gy[i] = (px(y + 1, x - 1) + 2 * px(y + 1, x) + px(y + 1, x + 1)) -
                    (px(y - 1, x - 1) + 2 * px(y - 1, x) + px(y - 1, x + 1));
            mag[i] = std::abs(gx[i]) + std::abs(gy[i]);
        }
    auto m = [&](int y, int x) { return (y < 0 || y >= h || x < 0 || x >= w) ? 0 : mag[size_t(y) * w + x]; };
    // Non-maximum suppression in OpenCV's fixed point: tan(22.5 deg) in 15 fractional bits splits the gradient
    // directions into horizontal, vertical and the two diagonals.
    constexpr int kShift = 15;
    const int tg22 = static_cast<int>(0.4142135623730950488016887242097 * (1 << kShift) + 0.5);
    enum : uint8_t { None, Weak, Strong };
    std::vector<uint8_t> state(mag.size(), None);
    std::vector<int> stack;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const size_t i = size_t(y) * w + x;
            const int v = mag[i];
            if (v <= low) continue;
            const int ax = std::abs(gx[i]), ay = std::abs(gy[i]) << kShift, t22 = ax * tg22;
            bool peak;
            if (ay < t22) {
                peak = v > m(y, x - 1) && v >= m(y, x + 1);
            } else if (ay > t22 + (ax << (kShift + 1))) {
                peak = v > m(y - 1, x) && v >= m(y + 1, x);
            } else {
                const int sgn = ((gx[i] < 0) != (gy[i] < 0)) ? -1 : 1;
                peak = v > m(y - 1, x - sgn) && v > m(y + 1, x + sgn);
            }
            if (!peak) continue;
            state[i] = v > high ? Strong : Weak;
            if (v > high) stack.push_back(static_cast<int>(i));
        }
    // Hysteresis: weak peaks 8-connected to a strong one become edges.
    while (!stack.empty()) {
        const int i = stack.back();
        stack.pop_back();
        const int y = i / w, x = i % w;
        for (int yy = std::max(y - 1, 0); yy <= std::min(y + 1, h - 1); ++yy)
            for (int xx = std::max(x - 1, 0); xx <= std::min(x + 1, w - 1); ++xx) {
                const size_t j = size_t(yy) * w + xx;
                if (state[j] == Weak) {
                    state[j] = Strong;
                    stack.push_back(static_cast<int>(j));
                }
            }
    }
    std::vector<uint8_t> edges(state.size());
    for (size_t i = 0; i < state.size(); ++i) edges[i] = state[i] == Strong ? 255 : 0;
    return edges;
}

std::vector<float> cv_distance_l2_5(const std::vector<uint8_t>& img, int h, int w) {
    // OpenCV's 5x5 chamfer: weights 1 (sides), 1.4 (diagonals), 2.1969 (knight moves) in 16-bit fixed point,
    // one pass forwards and one backwards; outside the image counts as far away.
    auto fixed = [](float v) { return static_cast<int64_t>(std::nearbyint(double(v) * 65536.0)); };
    const int64_t hv = fixed(1.0f), diag = fixed(1.4f), knight = fixed(2.1969f);
    const int64_t far = int64_t(1) << 40;
    const int W = w + 4;
    std::vector<int64_t> d(size_t(h + 4) * W, far);
    auto at = [&](int y, int x) -> int64_t& { return d[size_t(y + 2) * W + x + 2]; };
    struct Step {
        int dy, dx;
        int64_t cost;
    };
    const Step before[8] = {{-2, -1, knight}, {-2, 1, knight}, {-1, -2, knight}, {-1, -1, diag},
                            {-1, 0, hv},      {-1, 1, diag},   {-1, 2, knight},  {0, -1, hv}};
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            if (img[size_t(y) * w + x] == 0) {
                at(y, x) = 0;
                continue;
            }
            int64_t best = far;
            for (const Step& s : before) best = std::min(best, at(y + s.dy, x + s.dx) + s.cost);
            at(y, x) = best;
        }
    for (int y = h - 1; y >= 0; --y)
        for (int x = w - 1; x >= 0; --x) {
            int64_t best = at(y, x);
            for (const Step& s : before) best = std::min(best, at(y - s.dy, x - s.dx) + s.cost);
            at(y, x) = best;
        }
    std::vector<float> out(size_t(h) * w);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) out[size_t(y) * w + x] = static_cast<float>(double(at(y, x)) * (1.0 / 65536));
    return out;
}

std::vector<float> cv_blur3(const std::vector<float>& img, int h, int w) {
    // OpenCV sums float32 in double (exact here), then scales by 1/9 and stores float32.
    std::vector<float> out(img.size());
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double sum = 0;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx)
                    sum += img[size_t(fold(y + dy, h, Border::Mirror)) * w + fold(x + dx, w, Border::Mirror)];
            out[size_t(y) * w + x] = static_cast<float>(sum * (1.0 / 9));
        }
    return out;
}

std::vector<uint8_t> cv_blur3(const std::vector<uint8_t>& img, int h, int w) {
    std::vector<uint8_t> out(img.size());
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int sum = 0;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx)
                    sum += img[size_t(fold(y + dy, h, Border::Mirror)) * w + fold(x + dx, w, Border::Mirror)];
            // OpenCV divides by 9 as ((sum + 4) * 7282) >> 16, which rounds every 3x3 uint8 sum correctly.
            out[size_t(y) * w + x] = static_cast<uint8_t>(((sum + 4) * 7282) >> 16);
        }
    return out;
}

std::vector<uint8_t> cv_equalize_hist(const std::vector<uint8_t>& img) {
    int hist[256] = {};
    for (uint8_t v : img) ++hist[v];
    int first = 0;
    while (hist[first] == 0) ++first;
    const int total = static_cast<int>(img.size());
    if (hist[first] == total) return std::vector<uint8_t>(img.size(), static_cast<uint8_t>(first));
    // float32 arithmetic and round-half-even, as OpenCV's lookup table is built.
    const float scale = 255.f / float(total - hist[first]);
    uint8_t lut[256] = {};
    int sum = 0;
    for (int i = first + 1; i < 256; ++i) {
        sum += hist[i];
        lut[i] = static_cast<uint8_t>(std::clamp(std::nearbyint(float(sum) * scale), 0.f, 255.f));
    }
    std::vector<uint8_t> out(img.size());
    for (size_t i = 0; i < img.size(); ++i) out[i] = lut[img[i]];
    return out;
}

std::vector<uint8_t> cv_filter3_u8(const std::vector<uint8_t>& img, int h, int w, const int (&kernel)[3][3]) {
    std::vector<uint8_t> out(img.size());
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int sum = 0;
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j)
                    sum += kernel[i][j] *
                           img[size_t(fold(y + i - 1, h, Border::Mirror)) * w + fold(x + j - 1, w, Border::Mirror)];
            out[size_t(y) * w + x] = static_cast<uint8_t>(std::clamp(sum, 0, 255));
        }
    return out;
}

}  // namespace cw::data::corruption
