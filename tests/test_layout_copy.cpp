// The bf16 layout copy a conv2d_relu (and conv2d_relu_maxpool) output kernel writes beside its fp32 output for the
// next bf16 convolution (engine/layout_copy.h, engine/cpu/onednn_conv.cpp): its bits are bf16_blocked's conversion
// of the output, a network reading it computes what it computes without it, and a write to the output drops it.
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/cpu/bf16_blocked.h"
#include "engine/layout_copy.h"
#include "tests/conv_settings.h"
#include "tests/skip.h"

using namespace cw;
using namespace cw_test;

namespace {

const ConvPolicy kBf16{ConvPath::OneDnn, ConvPrecision::Bf16};

// A macro, not a function: CW_SKIP leaves by `return`, which must leave the test case itself (from a helper it
// returned into the test, which then ran the bf16 convolutions a CPU without AVX512_BF16 cannot: SIGILL).
#define REQUIRE_BF16_SETTING()                                                                              \
    do {                                                                                                    \
        if (!onednn_conv::cpu_has_bf16()) CW_SKIP("this CPU has no AVX512_BF16: no bf16 convolutions, no copies"); \
    } while (0)

// The copy attached to y, as bf16_blocked's conversion of y would write it; both as raw uint16 values.
std::vector<uint16_t> attached_copy(const Tensor& y) {
    const uint16_t* copy = onednn_conv::bf16_blocked_copy(y.impl().storage->layout_copy.get(), y.size(0), y.size(1),
                                                          y.size(2), y.size(3));
    REQUIRE(copy != nullptr);
    return std::vector<uint16_t>(copy, copy + y.numel());
}
std::vector<uint16_t> converted(const Tensor& y) {
    std::vector<uint16_t> out(static_cast<size_t>(y.numel()));
    bf16_blocked::from_nchw(y.f32(), out.data(), y.size(0), y.size(1), y.size(2) * y.size(3));
    return out;
}

// A conv2d_relu(_maxpool) -> conv2d chain's output and every gradient; with `drop`, the copy is dropped first (a
// write access to the first output), so the second convolution converts its input itself.
struct ChainResult {
    std::vector<float> out, gx, gw1, gb1, gw2;
    int64_t copies_read;
};
ChainResult chain(bool pooled, bool drop) {
    uint64_t seed = 40;
    const Shape4 s{4, 16, 10, 10, 32, 3, 1, 1};
    ConvInputs in = conv_inputs(s, true, seed, true);
    in.x.set_requires_grad(true), in.w.set_requires_grad(true), in.b.set_requires_grad(true);
    Tensor w2 = randn({16, 32, 3, 3}, seed++, 0.2f, false).set_requires_grad(true);
    onednn_conv::reset_time_split();
    Tensor y = pooled ? conv2d_relu_maxpool(in.x, in.w, in.b, 1, 1) : conv2d_relu(in.x, in.w, in.b, 1, 1);
    if (drop) y.f32();
    Tensor out = conv2d(y, w2, Tensor(), 1, 1);
    sum(mul(out, randn(out.shape(), seed++, 1.f, false))).backward();
    return {out.to_vector(), in.x.grad().to_vector(), in.w.grad().to_vector(), in.b.grad().to_vector(),
            w2.grad().to_vector(), onednn_conv::time_split().layout_copies_read};
}

}  // namespace

TEST_CASE("layout copy: a bf16 conv2d_relu output's copy is bf16_blocked's conversion of it, bit for bit",
          "[conv][layout_copy]") {
    REQUIRE_BF16_SETTING();
    const Setting setting(kBf16);
    uint64_t seed = 30;
    // 12 x 12 output: a last group of 16 pixels 9 wide (unpooled), of 4 wide (pooled 6 x 6 = 36).
    const Shape4 s{3, 8, 12, 12, 32, 3, 1, 1};
    const ConvInputs in = conv_inputs(s, true, seed, true);
    SECTION("conv2d_relu") {
        const Tensor y = conv2d_relu(in.x, in.w, in.b, 1, 1);
        CHECK(attached_copy(y) == converted(y));
    }
    SECTION("conv2d_relu_maxpool") {
        const Tensor y = conv2d_relu_maxpool(in.x, in.w, in.b, 1, 1);
        CHECK(attached_copy(y) == converted(y));
    }
}

TEST_CASE("layout copy: only a bf16 setting writes one", "[conv][layout_copy]") {
    uint64_t seed = 35;
    const Shape4 s{2, 4, 8, 8, 16, 3, 1, 1};
    const ConvInputs in = conv_inputs(s, true, seed, false);
    const Setting setting(ConvPolicy{ConvPath::OneDnn, ConvPrecision::Fp32});
    CHECK(conv2d_relu(in.x, in.w, in.b, 1, 1).impl().storage->layout_copy == nullptr);
}

TEST_CASE("layout copy: the next bf16 convolution reads it and computes what it computes without it",
          "[conv][layout_copy]") {
    REQUIRE_BF16_SETTING();
    const Setting setting(kBf16);
    for (const bool pooled : {false, true}) {
        INFO((pooled ? "conv2d_relu_maxpool" : "conv2d_relu") << " -> conv2d");
        const ChainResult with = chain(pooled, false), without = chain(pooled, true);
        // Read by the second convolution's forward and by its filter gradient.
        CHECK(with.copies_read == 2);
        CHECK(without.copies_read == 0);
        CHECK(differing(with.out, without.out) == 0);
        CHECK(differing(with.gx, without.gx) == 0);
        CHECK(differing(with.gw1, without.gw1) == 0);
        CHECK(differing(with.gb1, without.gb1) == 0);
        CHECK(differing(with.gw2, without.gw2) == 0);
    }
}

TEST_CASE("layout copy: a write to the output drops its copy", "[conv][layout_copy]") {
    REQUIRE_BF16_SETTING();
    const Setting setting(kBf16);
    uint64_t seed = 50;
    const Shape4 s{2, 4, 8, 8, 16, 3, 1, 1};
    const ConvInputs in = conv_inputs(s, true, seed, false);
    const Tensor w2 = randn({16, 16, 3, 3}, seed++, 0.3f, false);
    Tensor y = conv2d_relu(in.x, in.w, in.b, 1, 1);
    REQUIRE(y.impl().storage->layout_copy != nullptr);
    SECTION("fill_") { y.fill_(0.5f); }
    SECTION("data()") { std::fill(y.data(), y.data() + y.numel(), 0.5f); }
    SECTION("copy_from") { y.copy_from(Tensor::full(y.shape(), 0.5f)); }
    CHECK(y.impl().storage->layout_copy == nullptr);
    onednn_conv::reset_time_split();
    const std::vector<float> got = conv2d(y, w2, Tensor(), 1, 1).to_vector();
    CHECK(onednn_conv::time_split().layout_copies_read == 0);
    CHECK(differing(got, conv2d(Tensor::full(y.shape(), 0.5f), w2, Tensor(), 1, 1).to_vector()) == 0);
}

namespace {

// batch_norm_relu over x, in training or eval mode, with fixed statistics and parameters.
Tensor bn_relu(const Tensor& x, bool training) {
    const int64_t c = x.size(1);
    Tensor gamma = randn({c}, 61, 1.f, false), beta = randn({c}, 62, 0.5f, false);
    Tensor mean = randn({c}, 63, 0.3f, false), var = add(square(randn({c}, 64, 1.f, false)), 0.5f);
    return batch_norm_relu(x, gamma, beta, mean, var, training);
}

}  // namespace

TEST_CASE("layout copy: a bf16 batch_norm_relu output's copy is bf16_blocked's conversion, its values unchanged",
          "[conv][layout_copy][batch_norm]") {
    REQUIRE_BF16_SETTING();
    const bool training = GENERATE(true, false);
    INFO((training ? "training" : "eval") << " mode");
    // 32 channels, two groups of 16, of 32 x 32: 32 KB per channel, so the CPU kernel's blocks (about 256 KB, 8
    // channels) must be widened to whole groups.
    // One NaN makes channel 5 all NaN, which relu passes (in y and in the copy).
    Tensor x = randn({8, 32, 32, 32}, 60, 1.5f, false);
    x.data()[5 * 32 * 32 + 7] = NAN;
    Tensor plain;
    {
        const Setting fp32(ConvPolicy{ConvPath::OneDnn, ConvPrecision::Fp32});
        plain = bn_relu(x, training);
        CHECK(plain.impl().storage->layout_copy == nullptr);
    }
    const Setting setting(kBf16);
    const Tensor y = bn_relu(x, training);
    CHECK(attached_copy(y) == converted(y));
    const std::vector<float> a = y.to_vector(), b = plain.to_vector();
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    // Channels not a multiple of 16, or planes not of 16 pixels: no copy.
    CHECK(bn_relu(randn({2, 24, 4, 4}, 65, 1.f, false), training).impl().storage->layout_copy == nullptr);
    CHECK(bn_relu(randn({2, 16, 3, 3}, 66, 1.f, false), training).impl().storage->layout_copy == nullptr);
}

TEST_CASE("layout copy: a convolution after bf16 batch_norm_relu reads it and computes what it computes without it",
          "[conv][layout_copy][batch_norm]") {
    REQUIRE_BF16_SETTING();
    const Setting setting(kBf16);
    auto run = [](bool drop) {
        Tensor x = randn({4, 16, 8, 8}, 70, 1.f, false).set_requires_grad(true);
        Tensor gamma = randn({16}, 71, 1.f, false).set_requires_grad(true);
        Tensor beta = randn({16}, 72, 0.5f, false).set_requires_grad(true);
        Tensor mean = Tensor::zeros({16}), var = Tensor::ones({16});
        Tensor w = randn({32, 16, 3, 3}, 73, 0.3f, false).set_requires_grad(true);
        onednn_conv::reset_time_split();
        Tensor y = batch_norm_relu(x, gamma, beta, mean, var, true);
        if (drop) y.f32();
        Tensor out = conv2d(y, w, Tensor(), 2, 1);  // stride 2, as a downsampling block's
        sum(mul(out, randn(out.shape(), 74, 1.f, false))).backward();
        return std::vector<std::vector<float>>{out.to_vector(), x.grad().to_vector(), gamma.grad().to_vector(),
                                               beta.grad().to_vector(), w.grad().to_vector(),
                                               {float(onednn_conv::time_split().layout_copies_read)}};
    };
    const auto with = run(false), without = run(true);
    CHECK(with[5][0] == 2.f);
    CHECK(without[5][0] == 0.f);
    for (size_t i = 0; i < 5; ++i) CHECK(differing(with[i], without[i]) == 0);
}
