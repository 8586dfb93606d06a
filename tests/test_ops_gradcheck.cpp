// Finite-difference gradient checks: one per op, all through the one generic checker.
#include <algorithm>
#include <cmath>

#include "tests/test_util.h"

using namespace cw;
using namespace cw_test;
using In = const std::vector<Tensor>&;

TEST_CASE("gradcheck: broadcasting add/sub/mul/div", "[gradcheck][ops]") {
    auto a = randn({2, 3, 4, 5}, 1);
    auto per_channel = randn({1, 3, 1, 1}, 2);
    auto per_sample = randn({2, 1, 1, 1}, 3);
    require_gradcheck([](In x) { return add(x[0], x[1]); }, {a, per_channel});
    require_gradcheck([](In x) { return sub(x[0], x[1]); }, {a, per_sample});
    require_gradcheck([](In x) { return sub(x[1], x[0]); }, {a, per_sample});
    require_gradcheck([](In x) { return mul(x[0], x[1]); }, {a, per_channel});
    require_gradcheck([](In x) { return mul(x[0], x[1]); }, {a, randn({2, 3, 4, 5}, 4)});
    auto denom = rand_away_from_zero({1, 3, 1, 1}, 5, 0.5f, 1.5f);
    require_gradcheck([](In x) { return div(x[0], x[1]); }, {a, denom});
    require_gradcheck([](In x) { return div(x[1], x[0]); }, {rand_away_from_zero({2, 3, 4, 5}, 6, 0.5f), per_sample});
    // a 0-d tensor against anything
    require_gradcheck([](In x) { return mul(x[0], x[1]); }, {a, randn({}, 7)});
}

TEST_CASE("gradcheck: elementwise minimum/maximum (attack projection)", "[gradcheck][ops]") {
    auto x = distinct_values({2, 3, 2, 2}, 8, 0.05f);
    auto bound = randn({2, 1, 1, 1}, 9, 0.3f);
    // keep every element at least 2 steps from the per-sample bound
    auto xv = x.to_vector();
    auto bv = bound.to_vector();
    for (size_t i = 0; i < xv.size(); ++i)
        if (std::fabs(xv[i] - bv[i / 12]) < 0.03f) xv[i] += 0.06f;
    x = Tensor::from_vector(xv, x.shape()).set_requires_grad(true);
    require_gradcheck([](In t) { return minimum(t[0], t[1]); }, {x, bound});
    require_gradcheck([](In t) { return maximum(t[0], t[1]); }, {x, bound});
}

TEST_CASE("gradcheck: scalar and unary ops", "[gradcheck][ops]") {
    auto x = randn({3, 7}, 10);
    auto pos = rand_away_from_zero({3, 7}, 11, 0.3f, 2.f);
    auto pos_only = Tensor::from_vector([&] { auto v = pos.to_vector(); for (auto& e : v) e = std::fabs(e); return v; }(), {3, 7}).set_requires_grad(true);
    auto kinked = rand_away_from_zero({3, 7}, 12, 0.05f);
    require_gradcheck([](In t) { return add(t[0], 0.7f); }, {x});
    require_gradcheck([](In t) { return mul(t[0], -1.3f); }, {x});
    require_gradcheck([](In t) { return rsub(2.f, t[0]); }, {x});
    require_gradcheck([](In t) { return neg(t[0]); }, {x});
    require_gradcheck([](In t) { return cw::exp(t[0]); }, {x});
    require_gradcheck([](In t) { return cw::log(t[0]); }, {pos_only});
    require_gradcheck([](In t) { return square(t[0]); }, {x});
    require_gradcheck([](In t) { return cw::sqrt(t[0]); }, {pos_only});
    require_gradcheck([](In t) { return cw::pow(t[0], 3.f); }, {x});
    require_gradcheck([](In t) { return cw::pow(t[0], 0.5f); }, {pos_only});
    require_gradcheck([](In t) { return cw::abs(t[0]); }, {kinked});
    require_gradcheck([](In t) { return relu(t[0]); }, {kinked});
    require_gradcheck([](In t) { return leaky_relu(t[0], 0.1f); }, {kinked});
    require_gradcheck([](In t) { return sigmoid(t[0]); }, {x});
    require_gradcheck([](In t) { return cw::tanh(t[0]); }, {x});
    require_gradcheck([](In t) { return silu(t[0]); }, {x});
    require_gradcheck([](In t) { return silu(mul(t[0], 6.f)); }, {x});  // out to the saturated tails
    // sign has zero gradient everywhere it is differentiable
    require_gradcheck([](In t) { return mul(sign(t[0]), t[0]); }, {kinked});
    // clamp: elements inside and outside the box, none within a step of the bounds
    auto c = Tensor::from_vector({-1.f, -0.3f, 0.2f, 0.45f, 0.8f, 1.4f}, {2, 3}).set_requires_grad(true);
    require_gradcheck([](In t) { return clamp(t[0], 0.f, 1.f); }, {c});
}

TEST_CASE("gradcheck: reductions, max, top-k, gather", "[gradcheck][ops]") {
    auto x = randn({2, 3, 4}, 20);
    require_gradcheck([](In t) { return sum(t[0]); }, {x});
    require_gradcheck([](In t) { return sum(t[0], 1); }, {x});
    require_gradcheck([](In t) { return sum(t[0], -1, true); }, {x});
    require_gradcheck([](In t) { return mean(t[0]); }, {x});
    require_gradcheck([](In t) { return mean(t[0], 0); }, {x});
    auto d = distinct_values({3, 5}, 21);
    require_gradcheck([](In t) { return cw::max(t[0], 1); }, {d});
    require_gradcheck([](In t) { return cw::max(t[0], 0, true); }, {d});
    require_gradcheck([](In t) { return topk(t[0], 2, 1).values; }, {d});
    require_gradcheck([](In t) { return topk(t[0], 3, 0).values; }, {d});
    auto idx = Tensor::from_labels({4, 0, 2});
    require_gradcheck([idx](In t) { return gather(t[0], idx); }, {d});
}

TEST_CASE("gradcheck: reshape, flatten, concat", "[gradcheck][ops]") {
    auto x = randn({2, 3, 2, 2}, 30);
    auto y = randn({2, 1, 2, 2}, 31);
    require_gradcheck([](In t) { return mul(reshape(t[0], {6, -1}), reshape(t[0], {6, 4})); }, {x});
    require_gradcheck([](In t) { return flatten(t[0]); }, {x});
    require_gradcheck([](In t) { return concat({t[0], t[1], t[0]}, 1); }, {x, y});
    require_gradcheck([](In t) { return concat({t[0], t[1]}, 0); }, {randn({1, 3}, 32), randn({2, 3}, 33)});
}

TEST_CASE("gradcheck: softmax, log-softmax, cross-entropy, KL", "[gradcheck][ops]") {
    auto logits = randn({4, 5}, 40);
    auto labels = Tensor::from_labels({1, 0, 4, 2});
    require_gradcheck([](In t) { return softmax(t[0]); }, {logits});
    require_gradcheck([](In t) { return log_softmax(t[0]); }, {logits});
    require_gradcheck([labels](In t) { return cross_entropy(t[0], labels); }, {logits});
    require_gradcheck([labels](In t) { return cross_entropy(t[0], labels, {0.1f, {}, Reduction::Sum}); }, {logits});
    auto w = Tensor::from_vector({0.5f, 2.f, 1.f, 0.f}, {4});
    require_gradcheck([labels, w](In t) { return cross_entropy(t[0], labels, {0.f, w, Reduction::None}); }, {logits});
    require_gradcheck([labels, w](In t) { return cross_entropy(t[0], labels, {0.2f, w, Reduction::Mean}); }, {logits});
    auto q = randn({4, 5}, 41);
    require_gradcheck([](In t) { return kl_div(t[0], t[1], Reduction::None); }, {logits, q});
    require_gradcheck([](In t) { return kl_div(t[0], t[1], Reduction::Mean); }, {logits, q});
}

TEST_CASE("gradcheck: matmul and linear", "[gradcheck][ops]") {
    require_gradcheck([](In t) { return matmul(t[0], t[1]); }, {randn({3, 4}, 50), randn({4, 2}, 51)});
    require_gradcheck([](In t) { return linear(t[0], t[1], t[2]); }, {randn({3, 4}, 52), randn({5, 4}, 53), randn({5}, 54)});
    require_gradcheck([](In t) { return linear(t[0], t[1]); }, {randn({2, 4}, 55), randn({3, 4}, 56)});
}

TEST_CASE("gradcheck: conv2d (stride, padding, bias)", "[gradcheck][ops]") {
    struct Case { Shape x, w; int64_t stride, pad; bool bias; };
    const std::vector<Case> cases = {
        {{2, 3, 5, 5}, {4, 3, 3, 3}, 1, 1, true},
        {{2, 2, 6, 5}, {3, 2, 3, 3}, 2, 1, false},
        {{1, 3, 4, 4}, {2, 3, 1, 1}, 1, 0, true},   // pointwise, the im2col-free path
        {{3, 2, 5, 5}, {2, 2, 1, 1}, 2, 0, false},  // strided shortcut
        {{2, 1, 7, 7}, {2, 1, 4, 4}, 2, 1, true},   // even kernel (Wong MNIST net)
        {{2, 2, 4, 4}, {3, 2, 3, 3}, 1, 0, false},  // no padding (TRADES SmallCNN)
    };
    uint64_t seed = 60;
    for (const auto& c : cases) {
        auto x = randn(c.x, seed++);
        auto w = randn(c.w, seed++, 0.5f);
        auto b = randn({c.w[0]}, seed++);
        const int64_t s = c.stride, p = c.pad;
        if (c.bias)
            require_gradcheck([s, p](In t) { return conv2d(t[0], t[1], t[2], s, p); }, {x, w, b});
        else
            require_gradcheck([s, p](In t) { return conv2d(t[0], t[1], {}, s, p); }, {x, w});
    }
}

TEST_CASE("gradcheck: pooling", "[gradcheck][ops]") {
    auto x = distinct_values({2, 2, 4, 4}, 70, 0.05f);
    require_gradcheck([](In t) { return max_pool2d(t[0], 2); }, {x});
    require_gradcheck([](In t) { return max_pool2d(t[0], 3, 1, 1); }, {x});
    auto y = randn({2, 2, 5, 5}, 71);
    require_gradcheck([](In t) { return avg_pool2d(t[0], 2); }, {y});
    require_gradcheck([](In t) { return avg_pool2d(t[0], 3, 2, 1); }, {y});
    require_gradcheck([](In t) { return global_avg_pool2d(t[0]); }, {y});
}

TEST_CASE("gradcheck: batch norm in train and eval mode", "[gradcheck][ops]") {
    auto x = randn({4, 3, 2, 2}, 80);
    auto gamma = randn({3}, 81);
    auto beta = randn({3}, 82);
    auto rm = Tensor::zeros({3});
    auto rv = Tensor::ones({3});
    require_gradcheck([rm, rv](In t) mutable { return batch_norm(t[0], t[1], t[2], rm, rv, true); }, {x, gamma, beta});
    auto rm2 = Tensor::from_vector({0.1f, -0.2f, 0.3f}, {3});
    auto rv2 = Tensor::from_vector({0.5f, 1.5f, 2.f}, {3});
    require_gradcheck([rm2, rv2](In t) mutable { return batch_norm(t[0], t[1], t[2], rm2, rv2, false); }, {x, gamma, beta});
    // [N, C] input (BatchNorm1d-style)
    require_gradcheck([rm, rv](In t) mutable { return batch_norm(t[0], t[1], t[2], rm, rv, true); },
                      {randn({5, 3}, 83), gamma, beta});
    // 5x5 planes: one 16-wide lane block and a tail of 9 in each row (engine/cpu/lane_sum.h), both modes
    const Tensor planes = randn({2, 3, 5, 5}, 84);
    require_gradcheck([rm, rv](In t) mutable { return batch_norm(t[0], t[1], t[2], rm, rv, true); }, {planes, gamma, beta});
    require_gradcheck([rm2, rv2](In t) mutable { return batch_norm(t[0], t[1], t[2], rm2, rv2, false); },
                      {planes, gamma, beta});
}

namespace {
// Batch-norm inputs whose normalised values all stay far from 0: the second half of the batch is the first half
// negated (each channel's batch mean exactly 0) and no value is near 0, so with beta = 0 and a zero running mean
// no output of batch_norm_relu lies within the finite-difference step of the ReLU's kink.
Tensor mirrored_batch(const Shape& shape, uint64_t seed) {
    std::vector<float> v = rand_away_from_zero(shape, seed, 0.3f).to_vector();
    const size_t half = v.size() / 2;
    for (size_t i = 0; i < half; ++i) v[half + i] = -v[i];
    return Tensor::from_vector(v, shape).set_requires_grad(true);
}
}  // namespace

namespace {

using FusedConv = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t);
struct ConvCase { Shape x, w; int64_t stride, pad; bool bias; };

// Gradchecks a fused convolution op on each case, its inputs drawn (from `seed` on, up to `tries` times) until
// `separated` accepts the convolution's output [N, K, P, Q]: finite differences must not straddle a kink.
template <class Separated>
void gradcheck_fused_conv(FusedConv op, const std::vector<ConvCase>& cases, uint64_t seed, int tries,
                          Separated separated) {
    for (const auto& c : cases) {
        Tensor x, w, b;
        bool accepted = false;
        for (int t = 0; t < tries && !accepted; ++t) {
            x = randn(c.x, seed++), w = randn(c.w, seed++, 0.5f), b = randn({c.w[0]}, seed++);
            accepted = separated(conv2d(x.detach(), w.detach(), c.bias ? b.detach() : Tensor(), c.stride, c.pad));
        }
        REQUIRE(accepted);
        const int64_t s = c.stride, p = c.pad;
        if (c.bias)
            require_gradcheck([op, s, p](In t) { return op(t[0], t[1], t[2], s, p); }, {x, w, b});
        else
            require_gradcheck([op, s, p](In t) { return op(t[0], t[1], Tensor(), s, p); }, {x, w});
    }
}

// No pre-activation within 0.05 of relu's kink.
bool away_from_kink(const Tensor& z) {
    const auto v = z.to_vector();
    return std::all_of(v.begin(), v.end(), [](float e) { return std::fabs(e) > 0.05f; });
}

}  // namespace

// conv2d_relu's inputs are drawn until no pre-activation lies within 0.05 of relu's kink, where finite differences
// straddle it.
TEST_CASE("gradcheck: conv2d_relu (stride, padding, bias)", "[gradcheck][ops]") {
    gradcheck_fused_conv(conv2d_relu,
                         {{{2, 2, 4, 4}, {3, 2, 3, 3}, 1, 0, true},
                          {{1, 3, 5, 5}, {2, 3, 3, 3}, 2, 1, false},
                          {{2, 1, 5, 5}, {3, 1, 3, 3}, 1, 1, true}},  // a first layer (one channel)
                         900, 200, away_from_kink);
}

// conv2d_relu_maxpool's inputs are drawn until no pre-activation lies within 0.05 of relu's kink and, in every 2x2
// window whose maximum is positive, the maximum leads the rest by more than 0.05 (finite differences would otherwise
// straddle a change of the pool's choice).
TEST_CASE("gradcheck: conv2d_relu_maxpool (stride, padding, bias)", "[gradcheck][ops]") {
    auto windows_separated = [](const Tensor& zt) {
        if (!away_from_kink(zt)) return false;
        const auto z = zt.to_vector();
        const int64_t planes = zt.size(0) * zt.size(1), h = zt.size(2), wd = zt.size(3);
        for (int64_t pl = 0; pl < planes; ++pl)
            for (int64_t i = 0; i + 1 < h; i += 2)
                for (int64_t j = 0; j + 1 < wd; j += 2) {
                    const float* at = z.data() + pl * h * wd + i * wd + j;
                    std::vector<float> win = {at[0], at[1], at[wd], at[wd + 1]};
                    std::sort(win.begin(), win.end());
                    if (win[3] > 0 && win[3] - win[2] <= 0.05f) return false;
                }
        return true;
    };
    gradcheck_fused_conv(conv2d_relu_maxpool,
                         {{{2, 2, 5, 5}, {3, 2, 2, 2}, 1, 0, true},    // 4x4 -> 2x2
                          {{1, 3, 7, 7}, {2, 3, 3, 3}, 2, 1, false},   // 4x4 -> 2x2
                          {{2, 1, 4, 6}, {2, 1, 3, 3}, 1, 1, true}},   // a first layer, 4x6 -> 2x3
                         950, 2000, windows_separated);
}

TEST_CASE("gradcheck: batch_norm_relu (train and eval)", "[gradcheck][ops]") {
    auto gamma = rand_away_from_zero({3}, 81, 0.5f);  // both signs: the ReLU keeps either side of the mean
    auto beta = Tensor::zeros({3}).set_requires_grad(true);
    auto rm = Tensor::zeros({3});
    auto rv = Tensor::ones({3});
    auto rv2 = Tensor::from_vector({0.5f, 1.5f, 2.f}, {3});
    const Tensor planes = mirrored_batch({2, 3, 5, 5}, 84);
    require_gradcheck([rm, rv](In t) mutable { return batch_norm_relu(t[0], t[1], t[2], rm, rv, true); },
                      {planes, gamma, beta});
    require_gradcheck([rm, rv2](In t) mutable { return batch_norm_relu(t[0], t[1], t[2], rm, rv2, false); },
                      {planes, gamma, beta});
    require_gradcheck([rm, rv](In t) mutable { return batch_norm_relu(t[0], t[1], t[2], rm, rv, true); },
                      {mirrored_batch({6, 3}, 83), gamma, beta});
}

TEST_CASE("gradcheck: dropout with a fixed mask", "[gradcheck][ops]") {
    auto x = randn({4, 6}, 90);
    require_gradcheck([](In t) { Rng rng(5); return dropout(t[0], 0.3f, true, rng); }, {x});
}

TEST_CASE("gradcheck: the checker catches a wrong gradient", "[gradcheck]") {
    // y = x * x recorded with the gradient of 3x: the checker must refuse it.
    auto x = randn({5}, 99);
    auto wrong = [](In t) {
        Tensor y = Tensor::from_vector(square(t[0].detach()).to_vector(), t[0].shape());
        Tensor xin = t[0];
        record(y, "wrong_square", {xin}, [xin](const Tensor& gy, GradSink& sink) { sink.add(0, mul(mul(gy, xin.detach()), 3.f)); });
        return y;
    };
    const auto r = gradcheck(wrong, {x});
    REQUIRE_FALSE(r.ok);
    // and a backward that overwrites instead of accumulating is caught by the sentinel
    auto overwriting = [](In t) {
        Tensor y = Tensor::from_vector(mul(t[0].detach(), 2.f).to_vector(), t[0].shape());
        Tensor xin = t[0];
        record(y, "overwrite", {xin}, [xin](const Tensor& gy, GradSink&) mutable {
            Tensor g = mul(gy, 2.f);
            xin.set_grad(g.detach().clone());
        });
        return y;
    };
    REQUIRE_FALSE(gradcheck(overwriting, {randn({5}, 98)}).ok);
}
