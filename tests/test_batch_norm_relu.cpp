// batch_norm_relu against its definition relu(batch_norm(x)): the fused op must give the same values and the same
// gradients for x, gamma and beta, bit for bit (the CPU kernels sum in the same order either way), including where
// the ReLU decides: a value exactly at 0 (no gradient), a NaN (passes, as PyTorch's threshold), and every float
// around the point where a channel crosses 0 (the backward recomputes bn(x) to know where the forward clamped; any
// other rounding of that recomputation moves the gate by an ulp and shows up there).
#include <cstring>
#include <limits>
#include <optional>

#include "engine/cpu/batchnorm.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw_test;

namespace {

struct Outcome {
    std::vector<float> y, gx, ggamma, gbeta, running_mean, running_var;
};

// y = op(x), loss = sum(y * w) with fixed weights w, so every gradient element is its own number.
Outcome run(bool fused, bool training, const std::vector<float>& x_values, const Shape& shape,
            const std::vector<float>& gamma_values, const std::vector<float>& beta_values,
            const std::vector<float>& mean_values, const std::vector<float>& var_values) {
    Tensor x = Tensor::from_vector(x_values, shape).set_requires_grad(true);
    Tensor gamma = Tensor::from_vector(gamma_values, {shape[1]}).set_requires_grad(true);
    Tensor beta = Tensor::from_vector(beta_values, {shape[1]}).set_requires_grad(true);
    Tensor running_mean = Tensor::from_vector(mean_values, {shape[1]});
    Tensor running_var = Tensor::from_vector(var_values, {shape[1]});
    Tensor y = fused ? batch_norm_relu(x, gamma, beta, running_mean, running_var, training)
                     : relu(batch_norm(x, gamma, beta, running_mean, running_var, training));
    Tensor w = randn(shape, 77, 1.f, false);
    sum(mul(y, w)).backward();
    return {y.to_vector(),           x.grad().to_vector(),        gamma.grad().to_vector(),
            beta.grad().to_vector(), running_mean.to_vector(), running_var.to_vector()};
}

// Equal as bit patterns, so NaN matches NaN and -0 does not match +0.
void require_same_bits(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO(what << " element " << i << ": fused " << got[i] << ", relu(batch_norm) " << want[i]);
        REQUIRE(std::memcmp(&got[i], &want[i], sizeof(float)) == 0);
    }
}

void require_same(const Outcome& fused, const Outcome& reference) {
    require_same_bits(fused.y, reference.y, "output");
    require_same_bits(fused.gx, reference.gx, "input gradient");
    require_same_bits(fused.ggamma, reference.ggamma, "gamma gradient");
    require_same_bits(fused.gbeta, reference.gbeta, "beta gradient");
    require_same_bits(fused.running_mean, reference.running_mean, "running mean");
    require_same_bits(fused.running_var, reference.running_var, "running variance");
}

void require_fused_equals_reference(bool training, const std::vector<float>& x, const Shape& shape,
                                    const std::vector<float>& gamma, const std::vector<float>& beta,
                                    const std::vector<float>& mean, const std::vector<float>& var) {
    require_same(run(true, training, x, shape, gamma, beta, mean, var),
                 run(false, training, x, shape, gamma, beta, mean, var));
}

}  // namespace

TEST_CASE("batch_norm_relu: the values and gradients of relu(batch_norm), train and eval", "[ops][batch_norm]") {
    // 5x5 planes: a 16-wide lane block and a tail of 9 per row; [N, C] for the BatchNorm1d view.
    for (const Shape& shape : {Shape{4, 3, 5, 5}, Shape{16, 5}, Shape{2, 4, 8, 8}}) {
        const int64_t c = shape[1];
        const std::vector<float> x = randn(shape, 1, 1.5f, false).to_vector();
        const std::vector<float> gamma = randn({c}, 2, 1.f, false).to_vector();  // some negative: the gate flips
        const std::vector<float> beta = randn({c}, 3, 0.5f, false).to_vector();
        const std::vector<float> mean = randn({c}, 4, 0.3f, false).to_vector();
        std::vector<float> var = randn({c}, 5, 0.5f, false).to_vector();
        for (float& v : var) v = 0.2f + v * v;
        for (bool training : {true, false}) {
            INFO("shape " << shape_str(shape) << (training ? ", train" : ", eval"));
            require_fused_equals_reference(training, x, shape, gamma, beta, mean, var);
        }
    }
}

TEST_CASE("batch_norm_relu: no gradient where the output is exactly 0, and a NaN passes", "[ops][batch_norm]") {
    // Eval, one channel with running mean 0.5, beta 0: y = 0.5 * s + (0 - 0.5 * s) is exactly 0 at x = 0.5.
    const Shape shape{2, 1, 2, 2};
    const std::vector<float> x = {0.5f, 1.f, 0.f, 0.5f, 2.f, std::numeric_limits<float>::quiet_NaN(), -1.f, 0.75f};
    const std::vector<float> gamma = {2.f}, beta = {0.f}, mean = {0.5f}, var = {1.f};
    const Outcome fused = run(true, false, x, shape, gamma, beta, mean, var);
    require_same(fused, run(false, false, x, shape, gamma, beta, mean, var));
    const std::vector<float> w = randn(shape, 77, 1.f, false).to_vector();
    const float k = 2.f / std::sqrt(1.f + 1e-5f);  // gamma / sqrt(var + eps)
    REQUIRE(fused.y[0] == 0.f);
    REQUIRE(fused.gx[0] == 0.f);  // at the kink: ReLU's gradient is 0 (PyTorch: x <= 0 gives 0)
    REQUIRE(fused.gx[3] == 0.f);
    REQUIRE(fused.gx[2] == 0.f);  // below it
    REQUIRE(fused.gx[1] == w[1] * k);
    REQUIRE(std::isnan(fused.y[5]));
    REQUIRE(fused.gx[5] == w[5] * k);  // a NaN input passes its gradient

    // Train: a channel whose batch mean is exactly 0 (values and their negatives), beta 0, so y(0) is exactly 0.
    const std::vector<float> symmetric = {0.f, 0.25f, -0.25f, 1.5f, -1.5f, 0.f, 0.75f, -0.75f};
    const std::vector<float> ones = {1.f};
    require_same(run(true, true, symmetric, shape, gamma, beta, {0.f}, ones),
                 run(false, true, symmetric, shape, gamma, beta, {0.f}, ones));
}

TEST_CASE("batch_norm_relu: the backward gates exactly where the forward clamped, for every float near 0",
          "[ops][batch_norm]") {
    // Eval mode, 32 channels with their own statistics; each channel's plane runs over 1,024 consecutive floats
    // around the point where x * scale + shift crosses 0, where a recomputation rounded differently from the
    // forward's moves the gate.
    const int64_t channels = 32, per_channel = 1024;
    const std::vector<float> gamma = rand_away_from_zero({channels}, 11, 0.2f, 3.f).to_vector();
    const std::vector<float> beta = randn({channels}, 12, 1.f, false).to_vector();
    const std::vector<float> mean = randn({channels}, 13, 2.f, false).to_vector();
    std::vector<float> var = randn({channels}, 14, 1.f, false).to_vector();
    for (float& v : var) v = 0.01f + v * v;
    std::vector<float> xs;
    for (int64_t c = 0; c < channels; ++c) {
        const float scale = gamma[c] * (1.f / std::sqrt(var[c] + 1e-5f));
        float x = mean[c] - beta[c] / scale;
        for (int64_t i = 0; i < per_channel / 2; ++i) x = std::nextafter(x, -1e30f);
        for (int64_t i = 0; i < per_channel; ++i, x = std::nextafter(x, 1e30f)) xs.push_back(x);
    }
    const Shape shape{1, channels, 32, 32};
    const Outcome fused = run(true, false, xs, shape, gamma, beta, mean, var);
    require_same(fused, run(false, false, xs, shape, gamma, beta, mean, var));
    for (int64_t c = 0; c < channels; ++c) {  // each sweep straddles its crossing
        int64_t clamped = 0;
        for (int64_t i = 0; i < per_channel; ++i) clamped += fused.y[c * per_channel + i] == 0.f;
        INFO("channel " << c);
        REQUIRE(clamped > 100);
        REQUIRE(clamped < per_channel - 100);
    }
}

namespace {

// Scalar reference of the CPU kernels' documented arithmetic: each image's plane summed in 16 lanes (element i to
// lane i % 16, folded 8, 4, 2, 1, the tail after), the planes added in double, every product and sum rounded on
// its own (no fused multiply-add, even in a build for a CPU that has it): the same bits on every CPU.
template <class Term>
float lane_sum(int64_t n, Term term) {
    float acc[16] = {}, tail = 0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) acc[l] += term(i + l);
    for (; i < n; ++i) tail += term(i);
    for (int w = 8; w > 0; w /= 2)
        for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
    return acc[0] + tail;
}

// Volatile stores keep the compiler from fusing a product into the next sum here either.
inline float product(float a, float b) {
    volatile float p = a * b;
    return p;
}

Outcome reference_train(const std::vector<float>& x, const Shape& shape, const std::vector<float>& gamma,
                        const std::vector<float>& beta, bool relu) {
    const int64_t n_img = shape[0], channels = shape[1], hw = shape[2] * shape[3];
    const std::vector<float> w = randn(shape, 77, 1.f, false).to_vector();  // the gradient sum(y * w) sends back
    Outcome out{std::vector<float>(x.size()), std::vector<float>(x.size()), std::vector<float>(channels),
                std::vector<float>(channels), {}, {}};
    const double m = double(n_img * hw);
    for (int64_t c = 0; c < channels; ++c) {
        auto plane = [&](int64_t n) { return (n * channels + c) * hw; };
        double s = 0;
        for (int64_t n = 0; n < n_img; ++n) s += lane_sum(hw, [&](int64_t i) { return x[plane(n) + i]; });
        const float mean = float(s / m);
        double ss = 0;
        for (int64_t n = 0; n < n_img; ++n)
            ss += lane_sum(hw, [&](int64_t i) {
                const float d = x[plane(n) + i] - mean;
                return product(d, d);
            });
        const float invstd = float(1.0 / std::sqrt(ss / m + 1e-5f));
        const float scale = product(gamma[c], invstd), shift = beta[c] - product(mean, scale);
        auto pre = [&](size_t j) { return product(x[j], scale) + shift; };
        for (int64_t n = 0; n < n_img; ++n)
            for (int64_t i = 0; i < hw; ++i) {
                const size_t j = plane(n) + i;
                out.y[j] = relu && pre(j) <= 0 ? 0.f : pre(j);
            }
        auto g = [&](size_t j) { return relu && pre(j) <= 0 ? 0.f : w[j]; };
        double sum_g = 0, sum_gc = 0;
        for (int64_t n = 0; n < n_img; ++n) {
            sum_g += lane_sum(hw, [&](int64_t i) { return g(plane(n) + i); });
            sum_gc += lane_sum(hw, [&](int64_t i) { return product(g(plane(n) + i), x[plane(n) + i] - mean); });
        }
        sum_gc *= invstd;
        out.ggamma[c] = float(sum_gc);
        out.gbeta[c] = float(sum_g);
        const float k = product(gamma[c], invstd), mean_g = float(sum_g / m), mean_gc = float(sum_gc / m);
        for (int64_t n = 0; n < n_img; ++n)
            for (int64_t i = 0; i < hw; ++i) {
                const size_t j = plane(n) + i;
                const float xhat = product(x[j] - mean, invstd);
                out.gx[j] = product(k, g(j) - mean_g - product(xhat, mean_gc));
            }
    }
    return out;
}

}  // namespace

TEST_CASE("batch norm (and fused with ReLU), training mode, equals a scalar reference bit for bit",
          "[ops][batch_norm]") {
    // 37 columns: two 16-lane blocks and a tail of 5 per plane. 70 channels of 5: the CPU kernels take channels in
    // blocks of up to 64 (engine/cpu/batchnorm.cpp), so a full block and a partial one.
    const Shape shape = GENERATE(Shape{3, 4, 1, 37}, Shape{2, 70, 1, 5});
    const int64_t c = shape[1];
    INFO("shape " << shape_str(shape));
    // The CPU passes exist twice (engine/cpu/batchnorm.h): the AVX-512 copy where the CPU has it, and the plain
    // x86-64 one, which is otherwise never run on such a CPU; both are held to the reference.
    const bool portable = GENERATE(false, true);
    INFO((portable ? "plain x86-64 passes" : "the passes this CPU picks"));
    std::optional<batchnorm_cpu::PortableOnly> plain;
    if (portable) {
        plain.emplace();
        REQUIRE_FALSE(batchnorm_cpu::wide());
    }
    const std::vector<float> x = randn(shape, 21, 2.f, false).to_vector();
    const std::vector<float> gamma = randn({c}, 22, 1.f, false).to_vector();
    const std::vector<float> beta = randn({c}, 23, 0.5f, false).to_vector();
    const std::vector<float> zeros(static_cast<size_t>(c), 0.f), ones(static_cast<size_t>(c), 1.f);
    for (bool relu : {false, true}) {
        INFO((relu ? "batch_norm_relu" : "batch_norm"));
        const Outcome want = reference_train(x, shape, gamma, beta, relu);
        if (!relu) {  // run() puts a ReLU after the unfused op; the reference without one is batch norm alone
            Tensor xt = Tensor::from_vector(x, shape).set_requires_grad(true);
            Tensor gt = Tensor::from_vector(gamma, {c}).set_requires_grad(true);
            Tensor bt = Tensor::from_vector(beta, {c}).set_requires_grad(true);
            Tensor rm = Tensor::zeros({c}), rv = Tensor::ones({c});
            Tensor y = batch_norm(xt, gt, bt, rm, rv, true);
            sum(mul(y, randn(shape, 77, 1.f, false))).backward();
            require_same_bits(y.to_vector(), want.y, "output");
            require_same_bits(xt.grad().to_vector(), want.gx, "input gradient");
            require_same_bits(gt.grad().to_vector(), want.ggamma, "gamma gradient");
            require_same_bits(bt.grad().to_vector(), want.gbeta, "beta gradient");
            continue;
        }
        const Outcome got = run(true, true, x, shape, gamma, beta, zeros, ones);
        require_same_bits(got.y, want.y, "output");
        require_same_bits(got.gx, want.gx, "input gradient");
        require_same_bits(got.ggamma, want.ggamma, "gamma gradient");
        require_same_bits(got.gbeta, want.gbeta, "beta gradient");
    }
}
