// GEMM through OpenBLAS (its kernels are picked for the running CPU), or oneDNN's bf16 matmul under the bf16
// policy, and the bias helpers around it.
#include <cblas.h>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/lane_sum.h"
#include "engine/cpu/onednn_matmul.h"

namespace cw {

void CpuBackend::gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        // BLAS leaves C untouched for k == 0 only when beta == 1; make the result well-defined.
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
        return;
    }
    // The bf16 policy multiplies in bf16 the products it is for, the linear layers' and matmul's (alpha 1, beta 0).
    // Only the native convolution path scales or accumulates into C, and the bf16 policy never takes that path.
    if (conv_policy_.precision == ConvPrecision::Bf16 && alpha == 1.f && beta == 0.f)
        return onednn_matmul::multiply_bf16(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
                static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

void CpuBackend::add_channel_bias(float* y, const float* bias, AxisView v) {
#pragma omp parallel for collapse(2) schedule(static) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t c = 0; c < v.dim; ++c) {
            float* py = y + (o * v.dim + c) * v.inner;
            const float bc = bias[c];
            for (int64_t i = 0; i < v.inner; ++i) py[i] += bc;
        }
}

// A bias's gradient: each channel's plane of every image summed in 16 lanes (engine/cpu/lane_sum.h; a plain
// `part += p[i]` is one dependency chain, about ten times slower on a conv's planes), the planes in double.
void CpuBackend::channel_sum(const float* gy, float* gbias, AxisView v, bool accumulate) {
#pragma omp parallel for schedule(static) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t c = 0; c < v.dim; ++c) {
        double s = 0;
        for (int64_t o = 0; o < v.outer; ++o) s += lanes::sum(gy + (o * v.dim + c) * v.inner, v.inner);
        gbias[c] = static_cast<float>(accumulate ? gbias[c] + s : s);
    }
}

}  // namespace cw
