// The Winograd F(2x2, 3x3) path of the CPU convolution: the same numbers as im2col (float rounding apart) on every
// geometry it takes, odd sizes and batch remainders included, and gradients that pass the finite-difference check.
#include <cstdlib>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/winograd.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw_test;

namespace {

// Restores the backend's setting when a test ends, however it ends.
struct WinogradSetting {
    bool saved = cpu_backend().winograd_enabled();
    explicit WinogradSetting(bool on) { cpu_backend().set_winograd(on); }
    ~WinogradSetting() { cpu_backend().set_winograd(saved); }
};

std::vector<float> uniform(size_t n, uint64_t seed) {
    std::vector<float> v(n);
    Rng(seed).fill_uniform(v.data(), n, -1.f, 1.f);
    return v;
}

// Largest |a - b| over the largest |b|: the error relative to the size of the result.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
        scale = std::max(scale, std::fabs(double(b[i])));
    }
    return diff / scale;
}

}  // namespace

TEST_CASE("winograd: takes 3x3 stride-1 convolutions with enough channels, nothing else", "[conv][winograd]") {
    CHECK(winograd::applicable({2, 16, 8, 8, 16, 3, 3, 1, 1}));
    CHECK(winograd::applicable({2, 32, 9, 7, 16, 3, 3, 1, 0}));
    CHECK_FALSE(winograd::applicable({2, 16, 8, 8, 16, 3, 3, 2, 1}));  // strided
    CHECK_FALSE(winograd::applicable({2, 16, 8, 8, 16, 1, 1, 1, 0}));  // pointwise
    CHECK_FALSE(winograd::applicable({2, 3, 8, 8, 64, 3, 3, 1, 1}));   // RGB stem: too few input channels
    CHECK_FALSE(winograd::applicable({2, 16, 8, 8, 16, 3, 3, 1, 3}));  // padding beyond the tile grid
}

TEST_CASE("winograd: forward, backward-data and backward-filter equal im2col on odd sizes, paddings 0-2, "
          "batch remainders",
          "[conv][winograd]") {
    // {n, c, h, w, k, r, s, stride, pad}
    const std::vector<ConvGeometry> cases = {
        {2, 16, 8, 8, 16, 3, 3, 1, 1},   {3, 16, 7, 9, 24, 3, 3, 1, 1}, {5, 24, 6, 5, 16, 3, 3, 1, 0},
        {1, 16, 5, 5, 32, 3, 3, 1, 2},   {7, 32, 4, 4, 16, 3, 3, 1, 1}, {4, 16, 3, 3, 16, 3, 3, 1, 0},
        {130, 16, 4, 4, 16, 3, 3, 1, 1},  // several blocks and a partial last one
    };
    CpuBackend& be = cpu_backend();
    uint64_t seed = 1;
    for (const auto& g : cases) {
        INFO("n " << g.n << " c " << g.c << " " << g.h << "x" << g.w << " k " << g.k << " pad " << g.pad);
        REQUIRE(winograd::applicable(g));
        const int64_t p = g.out_h() * g.out_w();
        auto x = uniform(size_t(g.n * g.c * g.h * g.w), seed++), w = uniform(size_t(g.k * g.c * 9), seed++);
        auto gy = uniform(size_t(g.n * g.k * p), seed++);
        std::vector<float> y_ref(gy.size()), y_win(gy.size(), NAN), gx_ref(x.size()), gx_win(x.size(), NAN);
        std::vector<float> gw_ref(w.size()), gw_win(w.size(), NAN), gw_acc(w.size(), 0.25f), gw_acc_ref(w.size());
        {
            WinogradSetting off(false);
            be.conv2d_forward(x.data(), w.data(), y_ref.data(), g);
            be.conv2d_backward_data(gy.data(), w.data(), gx_ref.data(), g);
            be.conv2d_backward_filter(x.data(), gy.data(), gw_ref.data(), g, false);
        }
        {
            WinogradSetting on(true);
            be.conv2d_forward(x.data(), w.data(), y_win.data(), g);
            be.conv2d_backward_data(gy.data(), w.data(), gx_win.data(), g);
            be.conv2d_backward_filter(x.data(), gy.data(), gw_win.data(), g, false);
            be.conv2d_backward_filter(x.data(), gy.data(), gw_acc.data(), g, true);
        }
        for (size_t i = 0; i < gw_ref.size(); ++i) gw_acc_ref[i] = gw_ref[i] + 0.25f;
        // Sums of c*9 (or n*oh*ow) products of O(1) terms; the transforms add a few roundings per term.
        CHECK(relative_difference(y_win, y_ref) < 1e-5);
        CHECK(relative_difference(gx_win, gx_ref) < 1e-5);
        CHECK(relative_difference(gw_win, gw_ref) < 1e-5);
        CHECK(relative_difference(gw_acc, gw_acc_ref) < 1e-5);
    }
}

TEST_CASE("winograd: the combined backward (both gradients in one call) equals im2col", "[conv][winograd]") {
    const ConvGeometry g{3, 16, 6, 7, 16, 3, 3, 1, 1};
    CpuBackend& be = cpu_backend();
    auto x = uniform(size_t(g.n * g.c * g.h * g.w), 11), w = uniform(size_t(g.k * g.c * 9), 12);
    auto gy = uniform(size_t(g.n * g.k * g.out_h() * g.out_w()), 13);
    std::vector<float> gx_ref(x.size()), gw_ref(w.size()), gx(x.size(), NAN), gw(w.size(), NAN);
    {
        WinogradSetting off(false);
        be.conv2d_backward(x.data(), w.data(), gy.data(), gx_ref.data(), gw_ref.data(), g);
    }
    {
        WinogradSetting on(true);
        be.conv2d_backward(x.data(), w.data(), gy.data(), gx.data(), gw.data(), g);
    }
    CHECK(relative_difference(gx, gx_ref) < 1e-5);
    CHECK(relative_difference(gw, gw_ref) < 1e-5);
}

TEST_CASE("gradcheck: conv2d through the Winograd path", "[gradcheck][ops][winograd]") {
    WinogradSetting on(true);
    using In = const std::vector<Tensor>&;
    auto x = randn({2, 16, 5, 4}, 31);
    auto w = randn({16, 16, 3, 3}, 32, 0.2f);
    auto b = randn({16}, 33);
    require_gradcheck([](In t) { return conv2d(t[0], t[1], t[2], 1, 1); }, {x, w, b});
    require_gradcheck([](In t) { return conv2d(t[0], t[1], {}, 1, 0); }, {randn({1, 16, 6, 6}, 34), randn({16, 16, 3, 3}, 35, 0.2f)});
}

TEST_CASE("winograd: the filter gradient repeats bit for bit (training runs are reproducible)", "[conv][winograd]") {
    WinogradSetting on(true);
    const ConvGeometry g{37, 16, 6, 6, 16, 3, 3, 1, 1};  // many blocks, so both threads sum several
    auto x = uniform(size_t(g.n * g.c * g.h * g.w), 21), gy = uniform(size_t(g.n * g.k * 36), 22);
    std::vector<float> first(size_t(g.k * g.c * 9)), again(first.size());
    cpu_backend().conv2d_backward_filter(x.data(), gy.data(), first.data(), g, false);
    for (int rep = 0; rep < 5; ++rep) {
        cpu_backend().conv2d_backward_filter(x.data(), gy.data(), again.data(), g, false);
        REQUIRE(again == first);
    }
}
