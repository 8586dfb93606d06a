// conv2d_relu_maxpool (engine/ops/conv.cpp; on the CPU the pooled output kernel in engine/cpu/blocked_bias_relu.cpp
// and conv2d_relu's backward taking an already gated gradient): under every CPU convolution setting it equals
// max_pool2d(conv2d_relu(x, w, b), 2), the two ops it replaces, bit for bit — values, input, filter and bias
// gradients, the bias under bf16 included (the same gated gradient summed by the same pass) — and equals
// max_pool2d(relu(conv2d(x, w, b)), 2) the same way except bf16's bias gradient (to float summation error). Shapes cover the
// first-layer kernel (one input channel), oneDNN's blocked output with a partial last group of 16 pooled pixels,
// padding, non-square maps and the three-step fallback (24 filters). Filter 0 is all zeros with a zero bias (every
// window a tie of zeros: relu's gradient stops), filter 1 all zeros with a positive bias (every window a tie of
// equal positive values: the pool's first place takes the gradient). NaN passes as the three ops pass it.
// Seen failing with planted bugs: the window's candidates compared in column order (r0c0, r1c0, r0c1, r1c1: the
// hand-worked tie), `_CMP_GE_OQ` for the pool's comparison (ties go to the last place), the gate skipped in the
// backward (the zero channel's gradients), the argmax's row offset taken as w / 2 (gradients), and relu's NaN rule
// dropped from the pool (NaN windows).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/autograd.h"
#include "engine/error.h"
#include "nn/layers.h"
#include "tests/conv_settings.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw_test;

namespace {

struct Result {
    std::vector<float> y, gx, gw, gb;
};

// The same bits, NaN included (a NaN's payload too: both paths run the same arithmetic).
int64_t bits_differing(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    int64_t n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
    return n;
}

// How y = maxpool(relu(conv(x, w, b)), 2) is computed: the fused op, conv2d_relu then max_pool2d (what Sequential ran
// before the fusion), or three separate ops.
enum class Path { Fused, ConvReluThenPool, ThreeOps };

// y by `path`, and the gradients of sum(y * gy).
Result run(Path path, const Tensor& x0, const Tensor& w0, const Tensor& b0, const Tensor& gy, const Shape4& s) {
    Tensor x = x0.detach().set_requires_grad(true), w = w0.detach().set_requires_grad(true);
    Tensor b = b0.defined() ? b0.detach().set_requires_grad(true) : Tensor();
    Tensor y = path == Path::Fused              ? conv2d_relu_maxpool(x, w, b, s.stride, s.pad)
               : path == Path::ConvReluThenPool ? max_pool2d(conv2d_relu(x, w, b, s.stride, s.pad), 2)
                                                : max_pool2d(relu(conv2d(x, w, b, s.stride, s.pad)), 2);
    sum(mul(y, gy)).backward();
    return {y.to_vector(), x.grad().to_vector(), w.grad().to_vector(),
            b.defined() ? b.grad().to_vector() : std::vector<float>{}};
}

// The same bits everywhere; `bias_to_sum_error`: the bias gradient only to float summation error (bf16's gated
// conversion sums it in its own order, conv2d's bias gradient in another).
void check_same_bits(const Result& fused, const Result& steps, bool bias_to_sum_error = false) {
    CHECK(bits_differing(fused.y, steps.y) == 0);
    CHECK(bits_differing(fused.gx, steps.gx) == 0);
    CHECK(bits_differing(fused.gw, steps.gw) == 0);
    if (!bias_to_sum_error) {
        CHECK(bits_differing(fused.gb, steps.gb) == 0);
        return;
    }
    REQUIRE(fused.gb.size() == steps.gb.size());
    for (size_t k = 0; k < fused.gb.size(); ++k) CHECK(std::fabs(fused.gb[k] - steps.gb[k]) <= 1e-5 * (1 + std::fabs(steps.gb[k])));
}

int64_t conv_out(int64_t in, const Shape4& s) { return (in + 2 * s.pad - s.r) / s.stride + 1; }

const std::vector<Shape4> kShapes = {
    {4, 1, 28, 28, 32, 3, 1, 0},   // the small CNN's first layer shape: the thin data-gradient kernel, 13x13 pooled
    {4, 32, 14, 14, 32, 3, 1, 0},  // oneDNN's blocked output: 6x6 pooled, 36 = 16 + 16 + 4 pooled pixels
    {3, 16, 10, 10, 32, 3, 1, 1},  // padded: 5x5 pooled
    {2, 16, 12, 8, 16, 3, 1, 0},   // non-square: 10x6 -> 5x3
    {2, 16, 8, 8, 24, 3, 2, 1},    // 24 filters, stride 2: the three-step fallback, 4x4 -> 2x2
};

}  // namespace

TEST_CASE("conv2d_relu_maxpool equals max_pool2d(relu(conv2d), 2) bit for bit under every CPU setting", "[conv][ops]") {
    uint64_t seed = 41;
    for (const auto& [name, policy] : cpu_conv_settings()) {
        Setting setting(policy);
        for (const Shape4& s : kShapes)
            for (bool with_bias : {true, false}) {
                INFO(name << ", " << describe(s, with_bias));
                const auto [x, w, b] = conv_inputs(s, with_bias, seed, true);
                const int64_t ph = conv_out(s.h, s) / 2, pw = conv_out(s.w, s) / 2;
                Tensor gy = randn({s.n, s.k, ph, pw}, seed++, 1.f, false);
                const Result fused = run(Path::Fused, x, w, b, gy, s);
                check_same_bits(fused, run(Path::ConvReluThenPool, x, w, b, gy, s));
                check_same_bits(fused, run(Path::ThreeOps, x, w, b, gy, s), policy.precision == ConvPrecision::Bf16);
                if (with_bias) {
                    CHECK(fused.gb[0] == 0.f);  // ties of zeros: relu passed nothing
                    const std::vector<float> g = gy.to_vector();
                    double tie_sum = 0;  // ties of 0.25: every window's gradient reached the bias
                    for (int64_t i = 0; i < s.n; ++i)
                        for (int64_t q = 0; q < ph * pw; ++q) tie_sum += g[size_t((i * s.k + 1) * ph * pw + q)];
                    CHECK(std::fabs(fused.gb[1] - tie_sum) < 1e-4 * (1 + std::fabs(tie_sum)));
                }
            }
    }
}

TEST_CASE("conv2d_relu_maxpool sends each window's gradient to the place the pool took", "[conv][ops]") {
    // 16 input channels, all 0 but the first, and 16 1x1 filters that take the first channel (weight 1) and no bias
    // (16 channels: oneDNN's blocked layouts, the pooled output kernel and bf16's direct scatter): every output channel
    // is the first input channel, and its gradient is the pool's scatter gated by relu, summed over the 16 output
    // channels, written out here by hand. Window (0, 0): a tie of 3s after a smaller
    // first value (the window's second place, row 0, takes it, not its third); window (0, 1): the maximum bottom
    // right, its incoming gradient -0 (the pool's scatter adds it to 0: +0 reaches the convolution); window (1, 0):
    // all <= 0 (relu's gate: nothing); window (1, 1): a NaN (it takes the window, relu passes it and its gradient).
    const float nan = std::nanf("");
    const std::vector<float> xv = {1, 3, 1, 3,    //
                                   3, 2, 4, 5,    //
                                   -1, -2, 0, 1,  //
                                   -3, -1, nan, 2};
    const Shape4 s{1, 16, 4, 4, 16, 1, 1, 0};
    std::vector<float> xs(16 * 16, 0.f), ws(16 * 16, 0.f);
    std::copy(xv.begin(), xv.end(), xs.begin());
    for (int k = 0; k < 16; ++k) ws[size_t(16 * k)] = 1.f;
    for (const auto& [name, policy] : cpu_conv_settings()) {
        INFO(name);
        Setting setting(policy);
        Tensor x = Tensor::from_vector(xs, {1, 16, 4, 4}), w = Tensor::from_vector(ws, {16, 16, 1, 1});
        std::vector<float> gv;
        for (int k = 0; k < 16; ++k) gv.insert(gv.end(), {10, -0.f, 30, 40});
        const Tensor gy = Tensor::from_vector(gv, {1, 16, 2, 2});
        const Result r = run(Path::Fused, x, w, Tensor(), gy, s);
        REQUIRE(r.y.size() == 64);
        for (int k = 0; k < 16; ++k) {
            CHECK(r.y[size_t(4 * k)] == 3.f);
            CHECK(r.y[size_t(4 * k + 1)] == 5.f);
            CHECK(r.y[size_t(4 * k + 2)] == 0.f);
            CHECK(std::isnan(r.y[size_t(4 * k + 3)]));
        }
        const std::vector<float> expected = {0, 160, 0, 0,  //
                                             0, 0, 0, 0,    //
                                             0, 0, 0, 0,    //
                                             0, 0, 640, 0};
        CHECK(std::vector<float>(r.gx.begin(), r.gx.begin() + 16) == expected);
        CHECK(!std::signbit(r.gx[7]));
        check_same_bits(r, run(Path::ConvReluThenPool, x, w, Tensor(), gy, s));
    }
}

TEST_CASE("conv2d_relu_maxpool passes NaN as the three ops do", "[conv][ops]") {
    for (const Shape4& s : {kShapes[0], kShapes[1]})
        for (const auto& [name, policy] : cpu_conv_settings()) {
            INFO(describe(s, true) << ", " << name);
            Setting setting(policy);
            std::vector<float> xv = randn({s.n, s.c, s.h, s.w}, 5, 1.f, false).to_vector();
            xv[size_t(s.h * s.w + 3 * s.w + 4)] = std::nanf("");
            Tensor x = Tensor::from_vector(xv, {s.n, s.c, s.h, s.w});
            Tensor w = randn({s.k, s.c, s.r, s.r}, 6, 0.5f, false), b = randn({s.k}, 7, 0.3f, false);
            Tensor gy = randn({s.n, s.k, conv_out(s.h, s) / 2, conv_out(s.w, s) / 2}, 8, 1.f, false);
            const Result fused = run(Path::Fused, x, w, b, gy, s);
            CHECK(std::count_if(fused.y.begin(), fused.y.end(), [](float v) { return std::isnan(v); }) > 0);
            check_same_bits(fused, run(Path::ConvReluThenPool, x, w, b, gy, s));
        }
}

TEST_CASE("conv2d_relu_maxpool: an odd output is a one-line error; Conv2d falls back to the two ops", "[conv][ops]") {
    Tensor x = randn({1, 2, 9, 9}, 1, 1.f, false), w = randn({16, 2, 3, 3}, 2, 0.5f, false);
    try {
        conv2d_relu_maxpool(x, w);
        FAIL("no error for a 7x7 convolution output");
    } catch (const ShapeError& e) {
        CHECK(std::string(e.what()) ==
              "conv2d_relu_maxpool: the convolution's output [1, 16, 7, 7] must have even height and width for the "
              "2x2 windows to tile it (run conv2d_relu and max_pool2d instead)");
    }
    Rng rng(3);
    nn::Conv2d conv(2, 16, 3, 1, 0, true, rng);
    TapeRecorder tape;
    const Tensor y = conv.forward_relu_maxpool(x.detach().set_requires_grad(true));
    std::vector<std::string> ops;
    for (const auto& e : tape.entries()) ops.push_back(e.op);
    CHECK(ops == std::vector<std::string>{"conv2d_relu", "max_pool2d"});
    CHECK(y.shape() == Shape{1, 16, 3, 3});
}

TEST_CASE("Sequential runs Conv2d, ReLU, MaxPool2d(2) as conv2d_relu_maxpool, with the same outputs", "[conv][nn]") {
    Rng rng(3);
    auto conv = std::make_shared<nn::Conv2d>(2, 16, 3, 1, 1, true, rng);
    nn::Sequential net;
    net.add("conv", conv).add("relu", std::make_shared<nn::ReLU>()).add("pool", std::make_shared<nn::MaxPool2d>(2));
    Tensor x = randn({3, 2, 8, 8}, 4, 1.f, false).set_requires_grad(true);
    TapeRecorder tape;
    Tensor y = net.forward(x);
    std::vector<std::string> ops;
    for (const auto& e : tape.entries()) ops.push_back(e.op);
    CHECK(ops == std::vector<std::string>{"conv2d_relu_maxpool"});
    const Tensor steps = max_pool2d(relu(conv2d(x.detach(), conv->weight.detach(), conv->bias->detach(), 1, 1)), 2);
    CHECK(bits_differing(y.to_vector(), steps.to_vector()) == 0);
}

TEST_CASE("conv2d_relu_maxpool's input gradient alone (an attack step) equals the two ops'", "[conv][ops]") {
    uint64_t seed = 71;
    for (const auto& [name, policy] : cpu_conv_settings()) {
        Setting setting(policy);
        for (const Shape4& s : kShapes) {
            INFO(name << ", " << describe(s, true));
            const Tensor x0 = randn({s.n, s.c, s.h, s.w}, seed++, 1.f, false);
            const Tensor w = randn({s.k, s.c, s.r, s.r}, seed++, 0.5f, false), b = randn({s.k}, seed++, 0.3f, false);
            const Tensor gy = randn({s.n, s.k, conv_out(s.h, s) / 2, conv_out(s.w, s) / 2}, seed++, 1.f, false);
            std::vector<float> gx[2];
            for (int fused = 0; fused < 2; ++fused) {
                Tensor x = x0.detach().set_requires_grad(true);
                Tensor y = fused ? conv2d_relu_maxpool(x, w, b, s.stride, s.pad)
                                 : max_pool2d(conv2d_relu(x, w, b, s.stride, s.pad), 2);
                sum(mul(y, gy)).backward();
                gx[fused] = x.grad().to_vector();
            }
            CHECK(bits_differing(gx[1], gx[0]) == 0);
        }
    }
}
