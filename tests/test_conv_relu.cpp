// conv2d_relu (engine/ops/conv.cpp, the CPU backend's shared passes in engine/cpu/conv.cpp, onednn_conv.cpp,
// blocked_bias_relu.cpp, bf16_blocked.cpp and thin_conv_data.cpp): under every CPU convolution setting it equals
// relu(conv2d(x, w, b)) computed as separate ops — values, input and filter gradients bit for bit, the bias gradient
// bit for bit except where bf16 sums it in its own pass (there to float summation error of a float64 sum, and the
// same bits on 1 and 2 threads). Shapes cover the first-layer kernel (one input channel), oneDNN's blocked output
// (16k filters) and the fallbacks (24 filters, stride 2); one filter is all zeros with a zero bias, so relu's input
// is exactly 0 on a whole channel and its gradient must stop there; NaN passes as the relu op passes it. Sequential
// runs a Conv2d followed by a ReLU as this op.
// Seen failing with planted bugs: the gate `y < 0` instead of `y <= 0` (the zero channel: every setting), the bias
// added after relu in the output kernel (values), the NaN test of the gate ordered (`_CMP_GT_OQ`: NaN's gradient
// stopped), bf16's gated conversion not gating (gradients), the gated conversion's sums taken before gating (bias
// gradient), and the thin kernel ignoring relu's output (first-layer gradients).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <typeinfo>
#include <vector>

#include "engine/autograd.h"
#include "engine/cpu/cpu_backend.h"
#include "nn/layers.h"
#include "tests/conv_settings.h"
#include "tests/skip.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw_test;

namespace {

struct Result {
    std::vector<float> y, gx, gw, gb;
};

// y = relu(conv(x, w, b)) by `fused` or as separate ops, and the gradients of sum(y * gy).
Result run(bool fused, const Tensor& x0, const Tensor& w0, const Tensor& b0, const Tensor& gy, const Shape4& s) {
    Tensor x = x0.detach().set_requires_grad(true), w = w0.detach().set_requires_grad(true);
    Tensor b = b0.defined() ? b0.detach().set_requires_grad(true) : Tensor();
    Tensor y = fused ? conv2d_relu(x, w, b, s.stride, s.pad) : relu(conv2d(x, w, b, s.stride, s.pad));
    sum(mul(y, gy)).backward();
    return {y.to_vector(), x.grad().to_vector(), w.grad().to_vector(), b.defined() ? b.grad().to_vector()
                                                                                    : std::vector<float>{}};
}

const std::vector<Shape4> kShapes = {
    {6, 1, 28, 28, 32, 3, 1, 0},  // the small CNN's first layer: the thin data-gradient kernel
    {4, 32, 12, 12, 32, 3, 1, 0}, // 32 -> 32: oneDNN's blocked output and the gated bf16 conversion
    {3, 16, 9, 9, 24, 3, 2, 1},   // 24 filters, stride 2: the three-step fallbacks
    {2, 3, 10, 10, 16, 3, 1, 1},  // a colour first layer, padded
};

}  // namespace

TEST_CASE("conv2d_relu equals relu(conv2d) under every CPU convolution setting", "[conv][ops]") {
    uint64_t seed = 31;
    for (const auto& [name, policy] : cpu_conv_settings()) {
        Setting setting(policy);
        for (const Shape4& s : kShapes)
            for (bool with_bias : {true, false}) {
                INFO(name << ", " << describe(s, with_bias));
                const auto [x, w, b] = conv_inputs(s, with_bias, seed, false);  // filter 0: relu's input exactly 0
                const int64_t oh = (s.h + 2 * s.pad - s.r) / s.stride + 1, ow = (s.w + 2 * s.pad - s.r) / s.stride + 1;
                Tensor gy = randn({s.n, s.k, oh, ow}, seed++, 1.f, false);
                const Result fused = run(true, x, w, b, gy, s), steps = run(false, x, w, b, gy, s);
                CHECK(differing(fused.y, steps.y) == 0);
                CHECK(differing(fused.gx, steps.gx) == 0);
                CHECK(differing(fused.gw, steps.gw) == 0);
                if (!with_bias) continue;
                // bf16 on oneDNN sums the bias gradient in its gated conversion; elsewhere the same sum as the steps.
                const bool own_sum = policy.precision == ConvPrecision::Bf16 && s.k % 16 == 0;
                if (!own_sum) {
                    CHECK(differing(fused.gb, steps.gb) == 0);
                    continue;
                }
                const std::vector<float> y = steps.y, g = gy.to_vector();
                for (int64_t k = 0; k < s.k; ++k) {  // float64 sums of relu's gradient, by definition
                    double exact = 0, scale = 0;
                    for (int64_t i = 0; i < s.n; ++i)
                        for (int64_t p = 0; p < oh * ow; ++p) {
                            const size_t at = size_t((i * s.k + k) * oh * ow + p);
                            const double v = y[at] > 0 ? g[at] : 0.0;
                            exact += v, scale += std::fabs(v);
                        }
                    CHECK(std::fabs(fused.gb[size_t(k)] - exact) <= 1e-5 * (scale + 1e-30));
                }
                CHECK(fused.gb[0] == 0.f);  // the zero channel: relu passed nothing
                set_cpu_threads(1);
                const Result one_thread = run(true, x, w, b, gy, s);
                set_cpu_threads(2);
                const Result two_threads = run(true, x, w, b, gy, s);
                CHECK(std::memcmp(one_thread.gb.data(), two_threads.gb.data(), sizeof(float) * size_t(s.k)) == 0);
            }
    }
}

TEST_CASE("conv2d_relu passes NaN as relu does: in its values and its gradient", "[conv][ops]") {
    for (const Shape4& s : {kShapes[0], kShapes[1]})
        for (const auto& [name, policy] : cpu_conv_settings()) {
            INFO(describe(s, true) << ", " << name);
            Setting setting(policy);
            std::vector<float> xv = randn({s.n, s.c, s.h, s.w}, 5, 1.f, false).to_vector();
            xv[size_t(s.h * s.w + 3 * s.w + 4)] = std::nanf("");  // image 0, channel 1 (or image 1), row 3, column 4
            Tensor x = Tensor::from_vector(xv, {s.n, s.c, s.h, s.w});
            Tensor w = randn({s.k, s.c, s.r, s.r}, 6, 0.5f, false), b = randn({s.k}, 7, 0.3f, false);
            const int64_t oh = s.h - s.r + 1, ow = s.w - s.r + 1;
            Tensor gy = randn({s.n, s.k, oh, ow}, 8, 1.f, false);
            const Result fused = run(true, x, w, b, gy, s), steps = run(false, x, w, b, gy, s);
            CHECK(std::count_if(fused.y.begin(), fused.y.end(), [](float v) { return std::isnan(v); }) > 0);
            CHECK(differing(fused.y, steps.y) == 0);
            CHECK(differing(fused.gx, steps.gx) == 0);
            CHECK(differing(fused.gw, steps.gw) == 0);
            // relu's gradient at a NaN output passes: the bias gradient sums it (in bf16's own order, to float error)
            for (int64_t k = 0; k < s.k; ++k) CHECK(std::fabs(fused.gb[size_t(k)] - steps.gb[size_t(k)]) < 1e-3);
        }
}

TEST_CASE("Sequential runs a Conv2d followed by a ReLU as conv2d_relu, with the same outputs", "[conv][nn]") {
    Rng rng(3);
    auto conv = std::make_shared<nn::Conv2d>(2, 16, 3, 1, 1, true, rng);
    nn::Sequential net;  // a pool other than 2x2 at stride 2 stays its own op (test_conv_relu_maxpool.cpp)
    net.add("conv", conv).add("relu", std::make_shared<nn::ReLU>()).add("pool", std::make_shared<nn::MaxPool2d>(2, 1));
    Tensor x = randn({3, 2, 8, 8}, 4, 1.f, false).set_requires_grad(true);
    TapeRecorder tape;
    Tensor y = net.forward(x);
    std::vector<std::string> ops;
    for (const auto& e : tape.entries()) ops.push_back(e.op);
    CHECK(ops == std::vector<std::string>{"conv2d_relu", "max_pool2d"});
    const Tensor steps = max_pool2d(relu(conv2d(x.detach(), conv->weight.detach(), conv->bias->detach(), 1, 1)), 2, 1);
    CHECK(differing(y.to_vector(), steps.to_vector()) == 0);
}
