// The direct data gradient onto few input channels (engine/cpu/thin_conv_data.cpp) against a float64 sum written
// here from the definition, on geometries that reach every edge of its masks: padding 0 to 3, filters 1 to 7 wide,
// non-square filters, widths below, at and across its 32-column blocks, one output column. And the backend routes
// the first layers' data gradient to it under every convolution setting, with both of its entry points.
// Seen failing with planted bugs: the copied plane one column off in its zero-bordered buffer, the filter's taps
// read unflipped (w[k, c, r, s] for s -> S-1-s), the block loop stopping after the first 32 columns, and the buffer
// without the rows below the output that the last group of four input rows reads.
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/thin_conv_data.h"
#include "tests/skip.h"
#include "tests/test_bf16.h"
#include "tests/test_util.h"

using namespace cw;
using cw_test::bf16_rounded;

namespace {

std::vector<float> uniform(size_t n, uint64_t seed) {
    std::vector<float> v(n);
    Rng(seed).fill_uniform(v.data(), n, -1.f, 1.f);
    return v;
}

// gx[n, c, ih, iw] = sum over k, r, s with oh = ih + pad - r and ow = iw + pad - s inside the output (stride 1);
// `scale` gets the sum of the terms' magnitudes, the size float rounding is measured against.
std::vector<double> reference(const std::vector<float>& gy, const std::vector<float>& w, const ConvGeometry& g,
                              std::vector<double>& scale) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w();
    std::vector<double> gx(static_cast<size_t>(g.n * g.c * g.h * g.w), 0.0);
    scale.assign(gx.size(), 0.0);
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t c = 0; c < g.c; ++c)
            for (int64_t ih = 0; ih < g.h; ++ih)
                for (int64_t iw = 0; iw < g.w; ++iw) {
                    const size_t at = static_cast<size_t>(((n * g.c + c) * g.h + ih) * g.w + iw);
                    for (int64_t k = 0; k < g.k; ++k)
                        for (int64_t r = 0; r < g.r; ++r)
                            for (int64_t s = 0; s < g.s; ++s) {
                                const int64_t oh = ih + g.pad - r, ow = iw + g.pad - s;
                                if (oh < 0 || oh >= oh_n || ow < 0 || ow >= ow_n) continue;
                                const double term = double(w[static_cast<size_t>(((k * g.c + c) * g.r + r) * g.s + s)]) *
                                                    gy[static_cast<size_t>(((n * g.k + k) * oh_n + oh) * ow_n + ow)];
                                gx[at] += term;
                                scale[at] += std::fabs(term);
                            }
                }
    return gx;
}

// {n, c, h, w, k, r, s, stride, pad}
const std::vector<ConvGeometry> kShapes = {
    {3, 1, 28, 28, 32, 3, 3, 1, 0},  // the small CNN's first layer
    {2, 3, 32, 32, 16, 3, 3, 1, 1},  // the GTSRB CNN's and PreAct ResNet-18's first layers (fewer filters)
    {2, 2, 9, 37, 3, 5, 5, 1, 2},    // two blocks, the second 5 columns
    {1, 4, 6, 70, 2, 1, 7, 1, 3},    // a 1x7 filter, three blocks
    {2, 1, 3, 3, 5, 3, 3, 1, 0},     // one output pixel
    {1, 1, 5, 16, 2, 2, 4, 1, 0},    // a block exactly 16 wide, even filter sizes
    {1, 3, 4, 33, 2, 3, 3, 1, 1},    // 33 columns: one lane into the second block
};

}  // namespace

TEST_CASE("thin_conv_data: the data gradient equals a float64 sum of its definition", "[conv]") {
    if (!thin_conv_data::applies(kShapes[0])) CW_SKIP("this CPU has no AVX-512: the direct kernel does not run");
    // In bf16 the sum is over the inputs rounded to bf16 (rounded here, independently of the kernel's instruction).
    const bool bf16 = GENERATE(false, true);
    if (bf16 && !onednn_conv::cpu_has_bf16()) CW_SKIP("this CPU has no AVX512_BF16: the bf16 kernel does not run");
    const auto precision = bf16 ? onednn_conv::Precision::Bf16 : onednn_conv::Precision::Fp32;
    for (const ConvGeometry& g : kShapes) {
        INFO((bf16 ? "bf16" : "fp32") << " n " << g.n << " c " << g.c << " h " << g.h << " w " << g.w << " k " << g.k << " r " << g.r << " s "
                  << g.s << " pad " << g.pad);
        REQUIRE(thin_conv_data::applies(g));
        const auto gy = uniform(static_cast<size_t>(g.n * g.k * g.out_h() * g.out_w()), 11);
        const auto w = uniform(static_cast<size_t>(g.k * g.c * g.r * g.s), 12);
        std::vector<float> gx(static_cast<size_t>(g.n * g.c * g.h * g.w), NAN);
        thin_conv_data::backward_data(gy.data(), w.data(), gx.data(), g, precision);
        std::vector<double> scale;
        const std::vector<double> want =
            bf16 ? reference(bf16_rounded(gy), bf16_rounded(w), g, scale) : reference(gy, w, g, scale);
        size_t bad = 0;
        for (size_t i = 0; i < gx.size(); ++i)
            if (!(std::fabs(gx[i] - want[i]) <= 1e-6 * scale[i] + 1e-30)) ++bad;
        CHECK(bad == 0);
    }
}

// bf16 pairs the filters (k, k + 1) in one instruction; an odd last filter's partner is zero and must read nothing:
// here the next image's first plane is all infinities, which 0 x inf would carry into this image's gradient.
TEST_CASE("thin_conv_data: an odd last filter pairs with nothing", "[conv]") {
    const ConvGeometry g{2, 1, 6, 6, 3, 3, 3, 1, 1};
    if (!thin_conv_data::applies(g)) CW_SKIP("this CPU has no AVX-512: the direct kernel does not run");
    if (!onednn_conv::cpu_has_bf16()) CW_SKIP("this CPU has no AVX512_BF16: the bf16 kernel does not run");
    auto gy = uniform(static_cast<size_t>(g.n * g.k * g.out_h() * g.out_w()), 31);
    const auto w = uniform(static_cast<size_t>(g.k * g.c * g.r * g.s), 32);
    const size_t image = static_cast<size_t>(g.k * g.out_h() * g.out_w()), plane = static_cast<size_t>(g.h * g.w);
    std::fill(gy.begin() + image, gy.begin() + image + static_cast<size_t>(g.out_h() * g.out_w()), INFINITY);
    std::vector<float> gx(static_cast<size_t>(g.n * g.c) * plane, NAN);
    thin_conv_data::backward_data(gy.data(), w.data(), gx.data(), g, onednn_conv::Precision::Bf16);
    std::vector<double> scale;
    const std::vector<double> want = reference(bf16_rounded(gy), bf16_rounded(w), g, scale);
    for (size_t i = 0; i < plane; ++i) {  // image 0
        INFO("element " << i << ": " << gx[i] << " against " << want[i]);
        CHECK(std::fabs(gx[i] - want[i]) <= 1e-6 * scale[i] + 1e-30);
    }
}

TEST_CASE("thin_conv_data: the backend takes it for the first layers' data gradient, in every setting", "[conv]") {
    const ConvGeometry g{2, 1, 28, 28, 32, 3, 3, 1, 0};
    if (!thin_conv_data::applies(g)) CW_SKIP("this CPU has no AVX-512: the direct kernel does not run");
    const auto x = uniform(static_cast<size_t>(g.n * g.c * g.h * g.w), 21);
    const auto gy = uniform(static_cast<size_t>(g.n * g.k * g.out_h() * g.out_w()), 22);
    const auto w = uniform(static_cast<size_t>(g.k * g.c * g.r * g.s), 23);
    CpuBackend& be = cpu_backend();
    const ConvPolicy saved = be.conv_policy();
    for (const ConvPolicy p : {ConvPolicy{ConvPath::Native, ConvPrecision::Fp32}, ConvPolicy{ConvPath::OneDnn, ConvPrecision::Fp32},
                               ConvPolicy{ConvPath::OneDnn, ConvPrecision::Bf16}}) {
        if (p.precision == ConvPrecision::Bf16 && !onednn_conv::cpu_has_bf16()) continue;
        std::vector<float> want(x.size());
        thin_conv_data::backward_data(gy.data(), w.data(), want.data(), g, p.precision);
        be.set_conv_policy(p);
        std::vector<float> gx(x.size(), NAN), gx_both(x.size(), NAN), gw(w.size(), NAN);
        be.conv2d_backward_data(gy.data(), w.data(), gx.data(), g);
        be.conv2d_backward(x.data(), w.data(), gy.data(), gx_both.data(), gw.data(), g);
        CHECK(gx == want);
        CHECK(gx_both == want);
        // The filter gradient beside it is the setting's own: equal to the filter-only entry point's.
        std::vector<float> gw_alone(w.size(), NAN);
        be.conv2d_backward_filter(x.data(), gy.data(), gw_alone.data(), g, false);
        CHECK(gw == gw_alone);
    }
    be.set_conv_policy(saved);
}
