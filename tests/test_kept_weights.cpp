// A convolution's weights converted into oneDNN's layouts once and kept on their storage inside a
// layout_copy::KeepScope (engine/layout_copy.h, engine/cpu/onednn_conv.cpp): a later call reads the kept conversion
// and computes what it computes without it; any write access to the weights (the optimiser's step, a direct write)
// drops it, and so does the scope's end; outside a scope nothing is kept, so a write through a held pointer is seen.
#include <cstring>
#include <optional>
#include <vector>

#include "nn/optim.h"
#include "tests/conv_settings.h"
#include "tests/skip.h"

using namespace cw;
using namespace cw_test;

namespace {

// The values of conv2d(x, w) and the gradients of sum(y * weighting) for x and w, computed from a fresh clone of
// w (a storage nothing was kept on) and from w itself.
struct Run {
    std::vector<float> y, gx, gw;
};
Run conv_run(const Tensor& x_values, Tensor& w) {
    Tensor x = x_values.detach().set_requires_grad(true);
    w.impl().grad.reset();
    Tensor y = conv2d(x, w, Tensor(), 1, 1);
    sum(mul(y, randn(y.shape(), 103, 1.f, false))).backward();
    return {y.to_vector(), x.grad().to_vector(), w.grad().to_vector()};
}
Run fresh_run(const Tensor& x_values, const Tensor& w) {
    Tensor fresh = w.detach().clone().set_requires_grad(true);
    return conv_run(x_values, fresh);
}
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
void require_same(const Run& got, const Run& want) {
    CHECK(same_bits(got.y, want.y));
    CHECK(same_bits(got.gx, want.gx));
    CHECK(same_bits(got.gw, want.gw));
}

}  // namespace

TEST_CASE("kept weights: later calls read the conversion, and every write to the weights drops it", "[conv][layout_copy]") {
    const ConvPrecision precision = GENERATE(ConvPrecision::Fp32, ConvPrecision::Bf16);
    if (precision == ConvPrecision::Bf16 && !onednn_conv::cpu_has_bf16())
        CW_SKIP("this CPU has no AVX512_BF16: no bf16 convolutions");
    INFO((precision == ConvPrecision::Bf16 ? "bf16" : "fp32") << " oneDNN convolutions");
    const Setting setting(ConvPolicy{ConvPath::OneDnn, precision});
    const Tensor x = randn({4, 16, 8, 8}, 100, 1.f, false);
    Tensor w = randn({32, 16, 3, 3}, 101, 0.2f, false).set_requires_grad(true);
    std::optional<layout_copy::KeepScope> scope(std::in_place);

    // First call: the forward's and the data gradient's conversions made and kept; the second reads both.
    onednn_conv::reset_time_split();
    const Run first = conv_run(x, w);
    CHECK(onednn_conv::time_split().kept_weights_read == 0);
    CHECK(w.impl().storage->layout_copy != nullptr);
    onednn_conv::reset_time_split();
    const Run second = conv_run(x, w);
    CHECK(onednn_conv::time_split().kept_weights_read == 2);
    require_same(first, second);
    require_same(second, fresh_run(x, w));

    // The optimiser's step writes the weights: the next call converts the new ones.
    nn::SGD sgd({&w}, nn::SgdOptions{0.5f, 0.f, 0.f, 0.f, false});
    sgd.step();
    CHECK(w.impl().storage->layout_copy == nullptr);
    onednn_conv::reset_time_split();
    const Run after_step = conv_run(x, w);
    CHECK(onednn_conv::time_split().kept_weights_read == 0);
    require_same(after_step, fresh_run(x, w));
    CHECK_FALSE(same_bits(after_step.y, first.y));

    // So does a direct write.
    w.data()[0] += 1.f;
    onednn_conv::reset_time_split();
    const Run after_write = conv_run(x, w);
    CHECK(onednn_conv::time_split().kept_weights_read == 0);
    require_same(after_write, fresh_run(x, w));
    CHECK_FALSE(same_bits(after_write.y, after_step.y));

    // The scope's end drops what was kept.
    CHECK(w.impl().storage->layout_copy != nullptr);
    scope.reset();
    CHECK(w.impl().storage->layout_copy == nullptr);
}

TEST_CASE("kept weights: outside a keep scope nothing is kept, and a write through a held pointer is seen",
          "[conv][layout_copy]") {
    const Setting setting(ConvPolicy{ConvPath::OneDnn, ConvPrecision::Fp32});
    const Tensor x = randn({4, 16, 8, 8}, 105, 1.f, false);
    Tensor w = randn({32, 16, 3, 3}, 106, 0.2f, false);
    float* held = w.data();  // as a finite-difference check holds it, across op calls
    const std::vector<float> before = conv2d(x, w, Tensor(), 1, 1).to_vector();
    CHECK(w.impl().storage->layout_copy == nullptr);
    held[0] += 1.f;
    const std::vector<float> after = conv2d(x, w, Tensor(), 1, 1).to_vector();
    CHECK_FALSE(same_bits(after, before));
    CHECK(same_bits(after, conv2d(x, w.clone(), Tensor(), 1, 1).to_vector()));
}

TEST_CASE("kept weights: an input's copy and the weights' conversion are offered at once", "[conv][layout_copy]") {
    if (!onednn_conv::cpu_has_bf16()) CW_SKIP("this CPU has no AVX512_BF16: no bf16 convolutions");
    const Setting setting(ConvPolicy{ConvPath::OneDnn, ConvPrecision::Bf16});
    const layout_copy::KeepScope scope;
    // conv2d_relu writes its output's bf16 copy; the next convolution reads it and its own kept weights in one call.
    Tensor x = randn({2, 16, 8, 8}, 110, 1.f, false);
    Tensor w1 = randn({16, 16, 3, 3}, 111, 0.2f, false), w2 = randn({32, 16, 3, 3}, 112, 0.2f, false);
    const Tensor h = conv2d_relu(x, w1, Tensor(), 1, 1);
    conv2d(h, w2, Tensor(), 1, 1);
    onednn_conv::reset_time_split();
    const std::vector<float> y = conv2d(h, w2, Tensor(), 1, 1).to_vector();
    CHECK(onednn_conv::time_split().layout_copies_read == 1);
    CHECK(onednn_conv::time_split().kept_weights_read == 1);
    CHECK(same_bits(y, conv2d(h.detach().clone(), w2.detach().clone(), Tensor(), 1, 1).to_vector()));
}
