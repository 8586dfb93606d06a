// Hand-computed values for conv, pooling, batch norm and softmax cross-entropy; RNG reproducibility.
#include <limits>
#include <cmath>

#include "tests/test_util.h"

#include "engine/backend.h"
#include "engine/ops/op_util.h"

using namespace cw;
using namespace cw_test;

TEST_CASE("conv2d known values: valid, padded+strided, bias", "[known]") {
    auto x = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
    auto w = Tensor::from_vector({1, 2, 3, 4}, {1, 1, 2, 2});
    // out[i][j] = 1 x[i][j] + 2 x[i][j+1] + 3 x[i+1][j] + 4 x[i+1][j+1]
    require_close(conv2d(x, w).to_vector(), {37, 47, 67, 77});
    // padding 1, stride 2: windows start at (-1,-1), (-1,1), (1,-1), (1,1); plus bias 0.5
    require_close(conv2d(x, w, Tensor::from_vector({0.5f}, {1}), 2, 1).to_vector(), {4.5f, 18.5f, 36.5f, 77.5f});
    // two input channels and two filters: channel sums
    auto x2 = Tensor::from_vector({1, 1, 1, 1, 2, 2, 2, 2}, {1, 2, 2, 2});
    auto w2 = Tensor::from_vector({1, 0, 0, 0, 0, 0, 0, 1, /* filter 1 */ 1, 1, 1, 1, -1, -1, -1, -1}, {2, 2, 2, 2});
    require_close(conv2d(x2, w2).to_vector(), {1 + 2, 4 - 8});
}

TEST_CASE("pooling known values", "[known]") {
    auto x = Tensor::from_vector({1, 5, 2, 0, 3, 4, 8, 1, 0, 0, 1, 2, 9, 1, 3, 4}, {1, 1, 4, 4});
    require_close(max_pool2d(x, 2).to_vector(), {5, 8, 9, 4});
    require_close(avg_pool2d(x, 2).to_vector(), {13.f / 4, 11.f / 4, 10.f / 4, 10.f / 4});
    // padding counts as zeros in the average (count_include_pad, PyTorch's default)
    auto y = Tensor::from_vector({4, 4, 4, 4}, {1, 1, 2, 2});
    require_close(avg_pool2d(y, 2, 2, 1).to_vector(), {1, 1, 1, 1});
    require_close(global_avg_pool2d(x).to_vector(), {44.f / 16});
    // gradient of max-pool goes to the winners only
    auto xg = x.clone().set_requires_grad(true);
    sum(max_pool2d(xg, 2)).backward();
    require_close(xg.grad().to_vector(), {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1});
}

TEST_CASE("max-pool ties and NaN: the 2x2 fast path chooses like the general loop", "[known]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // windows: a tie of 7s (the first wins), a NaN before a larger 7 (NaN wins), 9, four equal 2s (the first wins)
    const std::vector<float> v = {3, 7, 1, nan, 7, 2, 7, 0, 9, 4, 2, 2, 1, 1, 2, 2};
    for (int64_t stride : {2, 1}) {  // stride 1 takes the general loop; its windows at even corners are the same
        INFO("stride " << stride);
        auto xg = Tensor::from_vector(v, {1, 1, 4, 4}).set_requires_grad(true);
        auto y = max_pool2d(xg, 2, stride, 0);
        const auto out = y.to_vector();
        auto window = [&](int r, int c) { return out[stride == 2 ? r * 2 + c : (2 * r) * 3 + 2 * c]; };
        REQUIRE(window(0, 0) == 7.f);
        REQUIRE(std::isnan(window(0, 1)));
        REQUIRE(window(1, 0) == 9.f);
        REQUIRE(window(1, 1) == 2.f);
        if (stride == 2) {
            sum(y).backward();
            auto g = xg.grad().to_vector();
            for (int i = 0; i < 16; ++i) {
                INFO("element " << i);
                REQUIRE(g[i] == ((i == 1 || i == 3 || i == 8 || i == 10) ? 1.f : 0.f));
            }
        }
    }
}

TEST_CASE("batch norm known values and running statistics", "[known]") {
    auto x = Tensor::from_vector({1, 2, 3, 4}, {4, 1});  // one channel, four samples
    auto gamma = Tensor::from_vector({2.f}, {1}), beta = Tensor::from_vector({0.5f}, {1});
    auto rm = Tensor::zeros({1}), rv = Tensor::ones({1});
    auto y = batch_norm(x, gamma, beta, rm, rv, true, 0.1f, 1e-5f).to_vector();
    const double invstd = 1.0 / std::sqrt(1.25 + 1e-5);  // biased variance 1.25
    for (int i = 0; i < 4; ++i) REQUIRE(y[i] == Approx(2.0 * (i + 1 - 2.5) * invstd + 0.5));
    REQUIRE(rm.item() == Approx(0.25));                         // 0.9 * 0 + 0.1 * 2.5
    REQUIRE(rv.item() == Approx(0.9 + 0.1 * (5.0 / 3.0)));      // unbiased variance 5/3
    // eval mode uses the running statistics
    auto ye = batch_norm(x, gamma, beta, rm, rv, false, 0.1f, 1e-5f).to_vector();
    REQUIRE(ye[3] == Approx(2.0 * (4 - 0.25) / std::sqrt(rv.item() + 1e-5) + 0.5));
}

TEST_CASE("softmax cross-entropy known values", "[known]") {
    auto logits = Tensor::from_vector({1, 2, 3}, {1, 3}).set_requires_grad(true);
    auto loss = cross_entropy(logits, Tensor::from_labels({2}));
    REQUIRE(loss.item() == Approx(0.40760596).epsilon(1e-6));
    loss.backward();
    require_close(logits.grad().to_vector(), {0.09003057f, 0.24472847f, 0.66524096f - 1.f}, 1e-6);
    require_close(softmax(logits.detach()).to_vector(), {0.09003057f, 0.24472847f, 0.66524096f}, 1e-6);
    // label smoothing 0.3 over 3 classes: target (0.1, 0.1, 0.8)
    auto ls = cross_entropy(logits.detach(), Tensor::from_labels({2}), {0.3f, {}, Reduction::Mean});
    const double lse = 3.40760596;
    REQUIRE(ls.item() == Approx(0.1 * (lse - 1) + 0.1 * (lse - 2) + 0.8 * (lse - 3)).epsilon(1e-6));
    // large logits stay finite
    auto big = cross_entropy(Tensor::from_vector({1000.f, 0.f}, {1, 2}), Tensor::from_labels({1}));
    REQUIRE(big.item() == Approx(1000.f));
}

TEST_CASE("KL divergence known value, zero for equal inputs", "[known]") {
    auto p = Tensor::from_vector({0.f, std::log(3.f)}, {1, 2});  // softmax -> (1/4, 3/4)
    auto q = Tensor::from_vector({0.f, 0.f}, {1, 2});            // (1/2, 1/2)
    const double want = 0.25 * std::log(0.5) + 0.75 * std::log(1.5);
    REQUIRE(kl_div(p, q).item() == Approx(want));
    REQUIRE(kl_div(p, p).item() == Approx(0.0).margin(1e-7));
}

TEST_CASE("max, argmax, top-k, gather, one-hot values", "[known]") {
    auto x = Tensor::from_vector({3, 1, 4, 1, 5, 9, 2, 6}, {2, 4});
    REQUIRE(argmax(x, 1).to_int_vector() == std::vector<int32_t>{2, 1});
    require_close(cw::max(x, 1).to_vector(), {4, 9});
    auto tk = topk(x, 2, 1);
    require_close(tk.values.to_vector(), {4, 3, 9, 6});
    REQUIRE(tk.indices.to_int_vector() == std::vector<int32_t>{2, 0, 1, 3});
    require_close(gather(x, Tensor::from_labels({3, 0})).to_vector(), {1, 5});
    require_close(one_hot(Tensor::from_labels({1, 0}), 3).to_vector(), {0, 1, 0, 1, 0, 0});
    require_close(sum(x, 0).to_vector(), {8, 10, 6, 7});
    require_close(mean(x, 1, true).to_vector(), {9.f / 4, 22.f / 4});
    REQUIRE(sum(x).item() == Approx(31));
}

TEST_CASE("RNG: same seed, same stream; state round-trips", "[rng]") {
    Rng a(42), b(42), c(43);
    for (int i = 0; i < 10; ++i) REQUIRE(a.next_u64() == b.next_u64());
    REQUIRE(a.next_u64() != c.next_u64());
    auto st = a.state();
    std::vector<float> first(5), again(5);
    a.normal();  // leaves a cached second normal inside the state
    st = a.state();
    a.fill_normal(first.data(), 5, 0, 1);
    a.set_state(st);
    a.fill_normal(again.data(), 5, 0, 1);
    REQUIRE(first == again);
    // moments and ranges
    Rng r(7);
    double s = 0, ss = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        const double v = r.normal();
        s += v;
        ss += v * v;
    }
    REQUIRE(s / n == Approx(0).margin(0.01));
    REQUIRE(ss / n == Approx(1).epsilon(0.02));
    int hits[3] = {0, 0, 0};
    const float w[3] = {1.f, 0.f, 3.f};
    for (int i = 0; i < 40000; ++i) ++hits[r.categorical(w, 3)];
    REQUIRE(hits[1] == 0);
    REQUIRE(hits[2] / 40000.0 == Approx(0.75).margin(0.01));
    int ones = 0;
    for (int i = 0; i < 40000; ++i) ones += r.bernoulli(0.3f);
    REQUIRE(ones / 40000.0 == Approx(0.3).margin(0.01));
    for (int i = 0; i < 1000; ++i) {
        const float u = r.uniform(-2.f, 3.f);
        REQUIRE((u >= -2.f && u < 3.f));
        REQUIRE(r.below(7) < 7u);
    }
    auto p = r.permutation(50);
    std::sort(p.begin(), p.end());
    for (int i = 0; i < 50; ++i) REQUIRE(p[i] == i);
}

TEST_CASE("conv backward kernels: combined call equals the separate ones; filter gradient accumulates", "[known]") {
    auto x = randn({3, 2, 6, 6}, 300, 1.f, false), w = randn({4, 2, 3, 3}, 301, 1.f, false);
    ConvGeometry g{3, 2, 6, 6, 4, 3, 3, 2, 1};
    auto gy = randn({3, 4, g.out_h(), g.out_w()}, 302, 1.f, false);
    Backend& k = backend(Device::cpu());
    auto gx1 = Tensor::zeros(x.shape()), gw1 = Tensor::zeros(w.shape());
    auto gx2 = Tensor::zeros(x.shape()), gw2 = Tensor::full(w.shape(), 1.f);
    k.conv2d_backward(x.f32(), w.f32(), gy.f32(), gx1.f32(), gw1.f32(), g);
    k.conv2d_backward_data(gy.f32(), w.f32(), gx2.f32(), g);
    k.conv2d_backward_filter(x.f32(), gy.f32(), gw2.f32(), g, /*accumulate=*/true);
    require_close(gx2.to_vector(), gx1.to_vector(), 1e-6);
    require_close(gw2.to_vector(), add(gw1, 1.f).to_vector(), 1e-5);
}

TEST_CASE("summing a gradient down to a shape that does not broadcast is a ShapeError, not a stray write", "[known]") {
    const Tensor x = Tensor::ones({2, 3, 4});
    REQUIRE(detail::sum_to_shape(x, {1, 3, 1}).to_vector() == std::vector<float>{8, 8, 8});
    REQUIRE(detail::sum_to_shape(x, {}).item() == 24.f);
    REQUIRE_THROWS_WITH(detail::sum_to_shape(x, {3, 4}), Catch::Contains("cannot be summed down to [3, 4]"));
    REQUIRE_THROWS_WITH(detail::sum_to_shape(x, {2, 2, 4}), Catch::Contains("cannot be summed down to [2, 2, 4]"));
}
