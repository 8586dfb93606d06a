// Batch norm over an [N, C, HW] view: statistics per channel, each row (one image's plane) summed in float lanes
// (engine/cpu/lane_sum.h), the rows accumulated in double for stability.
#include <cmath>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/lane_sum.h"

namespace cw {

namespace {
// (sum, sum of squares of deviations) of channel c, two passes.
void channel_stats(const float* x, AxisView v, int64_t c, double& mean, double& var) {
    const int64_t m = v.outer * v.inner;
    double s = 0;
    for (int64_t n = 0; n < v.outer; ++n) {
        s += lanes::sum(x + (n * v.dim + c) * v.inner, v.inner);
    }
    mean = s / static_cast<double>(m);
    double ss = 0;
    const float mf = static_cast<float>(mean);
    for (int64_t n = 0; n < v.outer; ++n) {
        ss += lanes::sum_squared_deviation(x + (n * v.dim + c) * v.inner, v.inner, mf);
    }
    var = ss / static_cast<double>(m);
}

void normalize_channel(const float* x, float* y, AxisView v, int64_t c, float mean, float invstd, float gamma,
                       float beta) {
    const float scale = gamma * invstd, shift = beta - mean * scale;
    for (int64_t n = 0; n < v.outer; ++n) {
        const float* p = x + (n * v.dim + c) * v.inner;
        float* q = y + (n * v.dim + c) * v.inner;
        for (int64_t i = 0; i < v.inner; ++i) q[i] = p[i] * scale + shift;
    }
}
}  // namespace

void CpuBackend::batchnorm_forward_train(const float* x, const float* gamma, const float* beta, float* y,
                                         float* save_mean, float* save_invstd, float* running_mean,
                                         float* running_var, AxisView v, float momentum, float eps) {
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
        normalize_channel(x, y, v, c, static_cast<float>(mean), invstd, gamma ? gamma[c] : 1.f, beta ? beta[c] : 0.f);
    }
}

void CpuBackend::batchnorm_forward_eval(const float* x, const float* gamma, const float* beta, float* y,
                                        const float* running_mean, const float* running_var, AxisView v,
                                        float eps) {
#pragma omp parallel for schedule(static) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t c = 0; c < v.dim; ++c)
        normalize_channel(x, y, v, c, running_mean[c], 1.f / std::sqrt(running_var[c] + eps), gamma ? gamma[c] : 1.f,
                          beta ? beta[c] : 0.f);
}

void CpuBackend::batchnorm_backward_train(const float* x, const float* gamma, const float* gy,
                                          const float* save_mean, const float* save_invstd, float* gx,
                                          float* ggamma, float* gbeta, AxisView v) {
    const double m = static_cast<double>(v.outer * v.inner);
#pragma omp parallel for schedule(dynamic, 1) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t c = 0; c < v.dim; ++c) {
        const float mean = save_mean[c], invstd = save_invstd[c];
        double sum_gy = 0, sum_gy_xhat = 0;
        for (int64_t n = 0; n < v.outer; ++n) {
            const int64_t at = (n * v.dim + c) * v.inner;
            const lanes::GradientSums row = lanes::sum_gradient(gy + at, x + at, v.inner, mean);
            sum_gy += row.g;
            sum_gy_xhat += row.g_centered;
        }
        sum_gy_xhat *= invstd;
        if (ggamma) ggamma[c] = static_cast<float>(sum_gy_xhat);
        if (gbeta) gbeta[c] = static_cast<float>(sum_gy);
        if (!gx) continue;
        const float g = gamma ? gamma[c] : 1.f;
        const float k = g * invstd;
        const float mean_gy = static_cast<float>(sum_gy / m), mean_gy_xhat = static_cast<float>(sum_gy_xhat / m);
        for (int64_t n = 0; n < v.outer; ++n) {
            const float* px = x + (n * v.dim + c) * v.inner;
            const float* pg = gy + (n * v.dim + c) * v.inner;
            float* po = gx + (n * v.dim + c) * v.inner;
            for (int64_t i = 0; i < v.inner; ++i) {
                const float xhat = (px[i] - mean) * invstd;
                po[i] = k * (pg[i] - mean_gy - xhat * mean_gy_xhat);
            }
        }
    }
}

void CpuBackend::batchnorm_backward_eval(const float* x, const float* gamma, const float* gy,
                                         const float* running_mean, const float* running_var, float* gx,
                                         float* ggamma, float* gbeta, AxisView v, float eps) {
#pragma omp parallel for schedule(static) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t c = 0; c < v.dim; ++c) {
        const float mean = running_mean[c], invstd = 1.f / std::sqrt(running_var[c] + eps);
        const float k = (gamma ? gamma[c] : 1.f) * invstd;
        // The input gradient needs no statistics of the batch; the sums (reading x too) only serve gamma and beta,
        // which an eval-mode attack never asks for.
        const bool sums = ggamma || gbeta;
        double sum_gy = 0, sum_gy_xhat = 0;
        for (int64_t n = 0; n < v.outer; ++n) {
            const int64_t at = (n * v.dim + c) * v.inner;
            const float* pg = gy + at;
            if (sums) {
                const lanes::GradientSums row = lanes::sum_gradient(pg, x + at, v.inner, mean);
                sum_gy += row.g;
                sum_gy_xhat += double(row.g_centered) * invstd;
            }
            if (!gx) continue;
            float* po = gx + at;
            for (int64_t i = 0; i < v.inner; ++i) po[i] = pg[i] * k;
        }
        if (ggamma) ggamma[c] = static_cast<float>(sum_gy_xhat);
        if (gbeta) gbeta[c] = static_cast<float>(sum_gy);
    }
}

}  // namespace cw
