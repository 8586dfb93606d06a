// Batch norm over an [N, C, HW] view: statistics per channel, each row (one image's plane) summed in float lanes
// (engine/cpu/lane_sum.h), the rows accumulated in double for stability. With `relu` the ReLU after it runs in the
// same passes (batch_norm_relu).
#include <cmath>
#include <type_traits>

#include "engine/batchnorm_math.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/lane_sum.h"

namespace cw {

namespace {

using bn::ChannelAffine;

// The gradient reaching batch norm's output: gy, or with the fused ReLU zero where the forward clamped
// (engine/batchnorm_math.h: the forward's own arithmetic). Both operands are loaded unconditionally so the select
// vectorises.
template <bool Relu>
inline float gated(const float* x, const float* gy, int64_t i, const ChannelAffine& affine) {
    const float g = gy[i];
    return Relu ? bn::gated(g, x[i], affine) : g;
}

// f(std::true_type) or f(std::false_type): a loop specialised for each, so the ReLU test is not made per element.
template <class F>
void with_relu(bool relu, F f) {
    if (relu)
        f(std::true_type{});
    else
        f(std::false_type{});
}

// ---- one row (one image's plane of one channel) at a time -------------------------------------------------------

void row_normalize(const float* p, float* q, int64_t n, ChannelAffine affine, bool relu) {
    if (relu) {
        for (int64_t i = 0; i < n; ++i) q[i] = bn::relu_at(bn::affine_at(affine, p[i]));
    } else {
        for (int64_t i = 0; i < n; ++i) q[i] = bn::affine_at(affine, p[i]);
    }
}

// Σ g[i] and Σ g[i] (x[i] - mean), g the gated gradient (without the ReLU, lanes::sum_gradient of gy itself).
lanes::GradientSums row_gradient_sums(const float* x, const float* gy, int64_t n, float mean, ChannelAffine affine,
                                      bool relu) {
    if (!relu) return lanes::sum_gradient(gy, x, n, mean);
    const std::array<float, 2> s = lanes::lane_sums<2>(n, [x, gy, mean, affine](int64_t i) {
        const float g = gated<true>(x, gy, i, affine);
        return std::array<float, 2>{g, g * (x[i] - mean)};
    });
    return {s[0], s[1]};
}

// Training mode: gx = k (g - mean_g - xhat mean_g_xhat).
struct TrainInputGradient {
    float mean, invstd, k, mean_g, mean_g_xhat;
};

template <bool Relu>
inline void train_input_gradient(const float* x, const float* gy, float* gx, int64_t n, const ChannelAffine& affine,
                                 const TrainInputGradient& t) {
    for (int64_t i = 0; i < n; ++i) {
        const float xhat = (x[i] - t.mean) * t.invstd;
        gx[i] = t.k * (gated<Relu>(x, gy, i, affine) - t.mean_g - xhat * t.mean_g_xhat);
    }
}

void row_train_input_gradient(const float* x, const float* gy, float* gx, int64_t n, ChannelAffine affine, bool relu,
                              TrainInputGradient t) {
    with_relu(relu, [&](auto r) { train_input_gradient<decltype(r)::value>(x, gy, gx, n, affine, t); });
}

// Eval mode: gx = k g.
template <bool Relu>
inline void eval_input_gradient(const float* x, const float* gy, float* gx, int64_t n, const ChannelAffine& affine,
                                float k) {
    for (int64_t i = 0; i < n; ++i) gx[i] = gated<Relu>(x, gy, i, affine) * k;
}

void row_eval_input_gradient(const float* x, const float* gy, float* gx, int64_t n, ChannelAffine affine, bool relu,
                             float k) {
    with_relu(relu, [&](auto r) { eval_input_gradient<decltype(r)::value>(x, gy, gx, n, affine, k); });
}

// ---- one channel ---------------------------------------------------------------------------------------------------

// Mean and (biased) variance of channel c, two passes.
void channel_stats(const float* x, AxisView v, int64_t c, double& mean, double& var) {
    const int64_t m = v.outer * v.inner;
    double s = 0;
    for (int64_t n = 0; n < v.outer; ++n) s += lanes::sum(x + (n * v.dim + c) * v.inner, v.inner);
    mean = s / static_cast<double>(m);
    double ss = 0;
    const float mf = static_cast<float>(mean);
    for (int64_t n = 0; n < v.outer; ++n)
        ss += lanes::sum_squared_deviation(x + (n * v.dim + c) * v.inner, v.inner, mf);
    var = ss / static_cast<double>(m);
}

void normalize_channel(const float* x, float* y, AxisView v, int64_t c, const ChannelAffine& affine, bool relu) {
    for (int64_t n = 0; n < v.outer; ++n) {
        const int64_t at = (n * v.dim + c) * v.inner;
        row_normalize(x + at, y + at, v.inner, affine, relu);
    }
}

ChannelAffine eval_affine(const float* gamma, const float* beta, const float* running_mean, const float* running_var,
                          int64_t c, float eps) {
    return bn::channel_affine(running_mean[c], 1.f / std::sqrt(running_var[c] + eps), gamma ? gamma[c] : 1.f,
                              beta ? beta[c] : 0.f);
}

}  // namespace

void CpuBackend::batchnorm_forward_train(const float* x, const float* gamma, const float* beta, float* y,
                                         float* save_mean, float* save_invstd, float* running_mean,
                                         float* running_var, AxisView v, float momentum, float eps, bool relu) {
    const int64_t m = v.outer * v.inner;
#pragma omp parallel for schedule(dynamic, 1) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t c = 0; c < v.dim; ++c) {
        double mean, var;
        channel_stats(x, v, c, mean, var);
        const float invstd = static_cast<float>(1.0 / std::sqrt(var + eps));
        save_mean[c] = static_cast<float>(mean);
        save_invstd[c] = invstd;
        if (running_mean) {
            // PyTorch: running statistics use the unbiased batch variance.
            const double unbiased = m > 1 ? var * m / (m - 1) : var;
            running_mean[c] = static_cast<float>((1 - momentum) * running_mean[c] + momentum * mean);
            running_var[c] = static_cast<float>((1 - momentum) * running_var[c] + momentum * unbiased);
        }
        const ChannelAffine affine =
            bn::channel_affine(save_mean[c], invstd, gamma ? gamma[c] : 1.f, beta ? beta[c] : 0.f);
        normalize_channel(x, y, v, c, affine, relu);
    }
}

void CpuBackend::batchnorm_forward_eval(const float* x, const float* gamma, const float* beta, float* y,
                                        const float* running_mean, const float* running_var, AxisView v,
                                        float eps, bool relu) {
#pragma omp parallel for schedule(static) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t c = 0; c < v.dim; ++c)
        normalize_channel(x, y, v, c, eval_affine(gamma, beta, running_mean, running_var, c, eps), relu);
}

void CpuBackend::batchnorm_backward_train(const float* x, const float* gamma, const float* beta, const float* gy,
                                          const float* save_mean, const float* save_invstd, float* gx,
                                          float* ggamma, float* gbeta, AxisView v, bool relu) {
    const double m = static_cast<double>(v.outer * v.inner);
#pragma omp parallel for schedule(dynamic, 1) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t c = 0; c < v.dim; ++c) {
        const float mean = save_mean[c], invstd = save_invstd[c];
        const float g = gamma ? gamma[c] : 1.f;
        const ChannelAffine affine = bn::channel_affine(mean, invstd, g, beta ? beta[c] : 0.f);
        double sum_gy = 0, sum_gy_xhat = 0;
        for (int64_t n = 0; n < v.outer; ++n) {
            const int64_t at = (n * v.dim + c) * v.inner;
            const lanes::GradientSums row = row_gradient_sums(x + at, gy + at, v.inner, mean, affine, relu);
            sum_gy += row.g;
            sum_gy_xhat += row.g_centered;
        }
        sum_gy_xhat *= invstd;
        if (ggamma) ggamma[c] = static_cast<float>(sum_gy_xhat);
        if (gbeta) gbeta[c] = static_cast<float>(sum_gy);
        if (!gx) continue;
        const TrainInputGradient t{mean, invstd, g * invstd, static_cast<float>(sum_gy / m),
                                   static_cast<float>(sum_gy_xhat / m)};
        for (int64_t n = 0; n < v.outer; ++n) {
            const int64_t at = (n * v.dim + c) * v.inner;
            row_train_input_gradient(x + at, gy + at, gx + at, v.inner, affine, relu, t);
        }
    }
}

void CpuBackend::batchnorm_backward_eval(const float* x, const float* gamma, const float* beta, const float* gy,
                                         const float* running_mean, const float* running_var, float* gx,
                                         float* ggamma, float* gbeta, AxisView v, float eps, bool relu) {
#pragma omp parallel for schedule(static) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t c = 0; c < v.dim; ++c) {
        const float mean = running_mean[c], invstd = 1.f / std::sqrt(running_var[c] + eps);
        const float k = (gamma ? gamma[c] : 1.f) * invstd;
        const ChannelAffine affine = eval_affine(gamma, beta, running_mean, running_var, c, eps);
        // The input gradient needs no statistics of the batch; the sums (reading x too) only serve gamma and beta,
        // which an eval-mode attack never asks for.
        const bool sums = ggamma || gbeta;
        double sum_gy = 0, sum_gy_xhat = 0;
        for (int64_t n = 0; n < v.outer; ++n) {
            const int64_t at = (n * v.dim + c) * v.inner;
            if (sums) {
                const lanes::GradientSums row = row_gradient_sums(x + at, gy + at, v.inner, mean, affine, relu);
                sum_gy += row.g;
                sum_gy_xhat += double(row.g_centered) * invstd;
            }
            if (gx) row_eval_input_gradient(x + at, gy + at, gx + at, v.inner, affine, relu, k);
        }
        if (ggamma) ggamma[c] = static_cast<float>(sum_gy_xhat);
        if (gbeta) gbeta[c] = static_cast<float>(sum_gy);
    }
}

}  // namespace cw
