// NaN goes through relu, leaky relu, clamp and max-pool as in PyTorch, forward and backward, so that a NaN weight
// shows in a model's output instead of being turned into 0 by the first ReLU. Expected values are PyTorch 1.13's
// (Debian python3-torch), e.g.
//   relu([nan, -1, 3]) = [nan, 0, 3],          grad for upstream 5: [5, 0, 5]  (threshold_backward: x <= 0 ? 0 : g)
//   leaky_relu(0.1):     [nan, -0.1, 3],       grad: [0.5, 0.5, 5]
//   clamp(-1, 2):        [nan, -1, 2],         grad: [0, 5, 0]
// Sizes run both below and above the CPU backend's parallel grain, with NaNs in vector bodies and tails.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/autograd.h"
#include "engine/ops.h"
#include "nn/layers.h"
#include "tests/test_util.h"

using namespace cw;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// -2.5 .. 2.5 in steps, with NaN planted at a few positions, including the first and the last.
std::vector<float> with_nans(int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 11) * 0.5f - 2.5f;
    for (int64_t at : {int64_t(0), int64_t(5), int64_t(17), n / 2 + 3, n - 1}) v[at] = kNaN;
    return v;
}

struct UnaryCase {
    const char* name;
    Tensor (*op)(const Tensor&);
    float (*forward)(float);      // on finite inputs
    float (*gradient)(float, float);  // (x, upstream g) on every input, NaN included
};

Tensor relu_op(const Tensor& x) { return relu(x); }
Tensor leaky_op(const Tensor& x) { return leaky_relu(x, 0.1f); }
Tensor clamp_op(const Tensor& x) { return clamp(x, -1.f, 2.f); }

const UnaryCase kCases[] = {
    {"relu", relu_op, [](float v) { return v > 0 ? v : 0.f; },
     [](float x, float g) { return std::isnan(x) || x > 0 ? g : 0.f; }},
    {"leaky_relu", leaky_op, [](float v) { return v > 0 ? v : 0.1f * v; },
     [](float x, float g) { return x > 0 ? g : 0.1f * g; }},
    {"clamp", clamp_op, [](float v) { return std::min(std::max(v, -1.f), 2.f); },
     [](float x, float g) { return x >= -1.f && x <= 2.f ? g : 0.f; }},
};

// sum(y * 5).backward() gives every element an upstream gradient of 5.
std::vector<float> gradient_for_upstream_5(const Tensor& x, const Tensor& y) {
    sum(mul(y, 5.f)).backward();
    return x.grad().to_vector();
}

}  // namespace

TEST_CASE("relu, leaky relu and clamp pass NaN through, and their gradients follow PyTorch at NaN", "[nan]") {
    for (int64_t n : {int64_t(40), int64_t(70001)}) {
        for (const UnaryCase& c : kCases) {
            INFO(c.name << ", " << n << " elements");
            const std::vector<float> xs = with_nans(n);
            Tensor x = Tensor::from_vector(xs, {n}).set_requires_grad(true);
            Tensor y = c.op(x);
            const std::vector<float> ys = y.to_vector();
            const std::vector<float> gs = gradient_for_upstream_5(x, y);
            int64_t nan_out = 0;
            for (int64_t i = 0; i < n; ++i) {
                INFO("element " << i << ", x = " << xs[i] << ", y = " << ys[i] << ", grad = " << gs[i]);
                if (std::isnan(xs[i])) {
                    REQUIRE(std::isnan(ys[i]));
                    ++nan_out;
                } else {
                    REQUIRE(ys[i] == c.forward(xs[i]));
                }
                REQUIRE(gs[i] == c.gradient(xs[i], 5.f));
            }
            REQUIRE(nan_out == 5);
        }
    }
}

TEST_CASE("2x2 max-pool (fast path): a NaN in the window wins and takes the gradient, the last NaN first", "[nan]") {
    // PyTorch: x = arange(16).reshape(1,1,4,4) with NaN at (0,1), (2,2), (3,3); max_pool2d(x, 2) = [[nan, 7], [13, nan]];
    // upstream 7 puts 7 at (0,1), (1,3), (3,1) and (3,3).
    std::vector<float> xs(16);
    for (int i = 0; i < 16; ++i) xs[i] = static_cast<float>(i);
    xs[1] = xs[10] = xs[15] = kNaN;
    Tensor x = Tensor::from_vector(xs, {1, 1, 4, 4}).set_requires_grad(true);
    Tensor y = max_pool2d(x, 2);
    const std::vector<float> ys = y.to_vector();
    REQUIRE(std::isnan(ys[0]));
    REQUIRE(ys[1] == 7.f);
    REQUIRE(ys[2] == 13.f);
    REQUIRE(std::isnan(ys[3]));
    sum(mul(y, 7.f)).backward();
    std::vector<float> want(16, 0.f);
    want[1] = want[7] = want[13] = want[15] = 7.f;
    REQUIRE(x.grad().to_vector() == want);
}

TEST_CASE("2x2 max-pool on many planes: every window with a NaN gives NaN and routes its gradient there", "[nan]") {
    // Big enough for the parallel, vectorised rows; one NaN in every third window, at a varying corner.
    const int64_t n = 4, c = 16, hw = 24, ohw = hw / 2;
    std::vector<float> xs(static_cast<size_t>(n * c * hw * hw));
    Rng rng(3);
    rng.fill_uniform(xs.data(), xs.size(), -1.f, 1.f);
    std::vector<int64_t> nan_at(static_cast<size_t>(n * c * ohw * ohw), -1);
    for (int64_t o = 0; o < static_cast<int64_t>(nan_at.size()); o += 3) {
        const int64_t plane = o / (ohw * ohw), oh = (o / ohw) % ohw, ow = o % ohw, corner = (o / 3) % 4;
        nan_at[o] = plane * hw * hw + (2 * oh + corner / 2) * hw + 2 * ow + corner % 2;
        xs[nan_at[o]] = kNaN;
    }
    Tensor x = Tensor::from_vector(xs, {n, c, hw, hw}).set_requires_grad(true);
    Tensor y = max_pool2d(x, 2);
    const std::vector<float> ys = y.to_vector();
    sum(y).backward();
    const std::vector<float> gs = x.grad().to_vector();
    for (size_t o = 0; o < nan_at.size(); ++o) {
        INFO("window " << o);
        REQUIRE(std::isnan(ys[o]) == (nan_at[o] >= 0));
        if (nan_at[o] >= 0) REQUIRE(gs[nan_at[o]] == 1.f);
    }
}

TEST_CASE("max-pool with padding and overlap (general path): NaN wins, the last NaN of a window takes the gradient",
          "[nan]") {
    // PyTorch: x = arange(25).reshape(1,1,5,5), NaN at (0,0) and (1,1); max_pool2d(x, 3, stride=2, padding=1) =
    // [[nan, nan, 9], [nan, nan, 19], [21, 23, 24]]; upstream 1 gives (1,1) all four gradients of the windows it
    // shares with (0,0) or alone.
    std::vector<float> xs(25);
    for (int i = 0; i < 25; ++i) xs[i] = static_cast<float>(i);
    xs[0] = xs[6] = kNaN;
    Tensor x = Tensor::from_vector(xs, {1, 1, 5, 5}).set_requires_grad(true);
    Tensor y = max_pool2d(x, 3, 2, 1);
    const std::vector<float> ys = y.to_vector();
    for (int i : {0, 1, 3, 4}) REQUIRE(std::isnan(ys[i]));
    REQUIRE(std::vector<float>(ys.begin() + 5, ys.end()) == std::vector<float>{19.f, 21.f, 23.f, 24.f});
    REQUIRE(ys[2] == 9.f);
    sum(y).backward();
    std::vector<float> want(25, 0.f);
    want[6] = 4.f;
    want[9] = want[19] = want[21] = want[23] = want[24] = 1.f;
    REQUIRE(x.grad().to_vector() == want);
}

TEST_CASE("a NaN weight in a conv-relu-pool network shows in every logit", "[nan]") {
    manual_seed(5);
    nn::Sequential net{std::make_shared<nn::Conv2d>(1, 4, 3), std::make_shared<nn::ReLU>(),
                       std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(),
                       std::make_shared<nn::Linear>(4 * 3 * 3, 3)};
    Tensor x = Tensor::full({2, 1, 8, 8}, 0.5f);
    for (float v : net(x).to_vector()) REQUIRE(std::isfinite(v));
    Tensor& w = *net.state().front().tensor;  // the conv weight
    std::vector<float> ws = w.to_vector();
    ws[0] = kNaN;
    w.copy_from(Tensor::from_vector(ws, w.shape()));
    for (float v : net(x).to_vector()) REQUIRE(std::isnan(v));
}
