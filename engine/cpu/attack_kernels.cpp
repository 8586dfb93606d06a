// The attack kernels of the CPU backend: per-row objectives and the projected step, both straight from
// engine/attack_math.h (the CUDA backend evaluates the same functions), and row copies for sample subsets.
#include <cstring>

#include "engine/attack_math.h"
#include "engine/cpu/cpu_backend.h"

namespace cw {

void CpuBackend::attack_objective(AttackObjective kind, const float* logits, const int32_t* labels,
                                  const int32_t* targets, float kappa, float* value, float* dz, float* wrong,
                                  float* on_target, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
    for (int64_t i = 0; i < rows; ++i)
        attack_math::objective_row(kind, logits + i * cols, cols, labels[i], targets ? targets[i] : -1, kappa,
                                   value + i, dz ? dz + i * cols : nullptr, wrong + i, on_target + i);
}

void CpuBackend::attack_step(AttackNorm norm, float* x_adv, const float* grad, const float* x_nat, const float* eps,
                             const float* alpha, int64_t n, int64_t dim) {
    const bool has_grad = grad != nullptr;
    if (norm == AttackNorm::Linf) {
#pragma omp parallel for schedule(static) if (n * dim > kParallelGrain)
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = i * dim; j < (i + 1) * dim; ++j)
                x_adv[j] = attack_math::linf_step(x_adv[j], has_grad ? grad[j] : 0.f, x_nat[j], eps[i], alpha[i],
                                                  has_grad);
        return;
    }
    // L2: each sample's norms are summed in double, in index order, by one thread.
#pragma omp parallel for schedule(static) if (n * dim > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
        float* a = x_adv + i * dim;
        const float* c = x_nat + i * dim;
        if (has_grad) {
            const float* g = grad + i * dim;
            double gg = 0;
            for (int64_t j = 0; j < dim; ++j) gg += double(g[j]) * g[j];
            const float step = attack_math::l2_step_scale(alpha[i], gg);
            for (int64_t j = 0; j < dim; ++j) a[j] = attack_math::l2_stepped(a[j], g[j], step, true);
        }
        double dd = 0;
        for (int64_t j = 0; j < dim; ++j) {
            const double d = a[j] - c[j];
            dd += d * d;
        }
        const float ball = attack_math::l2_ball_scale(eps[i], dd);
        for (int64_t j = 0; j < dim; ++j) a[j] = attack_math::l2_project(a[j], c[j], ball);
    }
}

void CpuBackend::copy_rows(const float* src, const int32_t* src_rows, float* dst, const int32_t* dst_rows,
                           int64_t count, int64_t row_len) {
#pragma omp parallel for schedule(static) if (count * row_len > kParallelGrain)
    for (int64_t k = 0; k < count; ++k) {
        const int64_t s = src_rows ? src_rows[k] : k, d = dst_rows ? dst_rows[k] : k;
        std::memcpy(dst + d * row_len, src + s * row_len, sizeof(float) * row_len);
    }
}

void CpuBackend::square_window(float* x_adv, const float* x_nat, const int32_t* rows, const float* eps, int64_t n,
                               int64_t c, int64_t h, int64_t w, int64_t top, int64_t left, int64_t side,
                               uint32_t negative_channels) {
    const int64_t dim = c * h * w;
#pragma omp parallel for schedule(static) if (n * c * side * side > kParallelGrain)
    for (int64_t k = 0; k < n; ++k) {
        float* a = x_adv + k * dim;
        const float* nat = x_nat + int64_t(rows[k]) * dim;
        const float e = eps[rows[k]];
        for (int64_t ch = 0; ch < c; ++ch) {
            const float sigma = (negative_channels >> ch) & 1u ? -1.f : 1.f;
            for (int64_t row = top; row < top + side; ++row)
                for (int64_t col = left; col < left + side; ++col) {
                    const int64_t j = (ch * h + row) * w + col;
                    a[j] = attack_math::square_window_value(a[j], nat[j], e, sigma);
                }
        }
    }
}

void CpuBackend::where_rows(const float* mask, const float* a, const float* b, float* y, int64_t n, int64_t row_len) {
#pragma omp parallel for schedule(static) if (n * row_len > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
        const float* src = (mask[i] != 0.f ? a : b) + i * row_len;
        if (src != y + i * row_len) std::memcpy(y + i * row_len, src, sizeof(float) * row_len);
    }
}

}  // namespace cw
