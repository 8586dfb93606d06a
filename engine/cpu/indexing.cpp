// Gathering one entry per row (margin losses), one-hot, and block copies for channel concatenation.
#include <cstring>

#include "engine/cpu/cpu_backend.h"

namespace cw {

void CpuBackend::gather_rows(const float* x, const int32_t* idx, float* y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r) y[r] = x[r * cols + idx[r]];
}

void CpuBackend::gather_rows_backward(const float* gy, const int32_t* idx, float* gx, int64_t rows, int64_t cols) {
    std::memset(gx, 0, sizeof(float) * rows * cols);
    for (int64_t r = 0; r < rows; ++r) gx[r * cols + idx[r]] = gy[r];
}

void CpuBackend::one_hot(const int32_t* labels, float* y, int64_t rows, int64_t cols) {
    std::memset(y, 0, sizeof(float) * rows * cols);
    for (int64_t r = 0; r < rows; ++r) y[r * cols + labels[r]] = 1.f;
}

void CpuBackend::copy_block(const float* src, float* dst, int64_t outer, int64_t block_inner, int64_t wide_inner,
                            int64_t offset, bool block_to_wide) {
#pragma omp parallel for schedule(static) if (outer * block_inner > kParallelGrain)
    for (int64_t o = 0; o < outer; ++o) {
        if (block_to_wide)
            std::memcpy(dst + o * wide_inner + offset, src + o * block_inner, sizeof(float) * block_inner);
        else
            std::memcpy(dst + o * block_inner, src + o * wide_inner + offset, sizeof(float) * block_inner);
    }
}

}  // namespace cw
