// Gathering one entry per row (margin losses) and its gradient, one-hot encoding, and the block copies behind
// channel concatenation. Indices arriving from the host are not range-checked by the ops on the GPU, so the
// kernels guard every read and write: an out-of-range index yields NaN (gather, one-hot) or no gradient, never a
// stray memory access.
#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"

namespace cw::cuda {

namespace {

__global__ void gather_rows_kernel(const float* x, const int32_t* idx, float* y, int64_t rows, int64_t cols) {
    CW_GRID_STRIDE(r, rows) {
        const int32_t j = idx[r];
        y[r] = (j >= 0 && j < cols) ? x[r * cols + j] : NAN;
    }
}

// Overwrites gx: gy[r] at (r, idx[r]), zero elsewhere.
__global__ void gather_rows_backward_kernel(const float* gy, const int32_t* idx, float* gx, int64_t cols, int64_t n) {
    CW_GRID_STRIDE(e, n) {
        const int64_t r = e / cols, j = e % cols;
        gx[e] = j == idx[r] ? gy[r] : 0.f;
    }
}

__global__ void one_hot_kernel(const int32_t* labels, float* y, int64_t cols, int64_t n) {
    CW_GRID_STRIDE(e, n) {
        const int64_t r = e / cols, j = e % cols;
        const int32_t label = labels[r];
        y[e] = (label < 0 || label >= cols) ? NAN : (j == label ? 1.f : 0.f);
    }
}

// One thread per element of the block (narrow) tensor [outer, block_inner]; the wide tensor is
// [outer, wide_inner] and the block occupies its columns [offset, offset + block_inner).
__global__ void copy_block_kernel(const float* src, float* dst, int64_t block_inner, int64_t wide_inner,
                                  int64_t offset, bool block_to_wide, int64_t n) {
    CW_GRID_STRIDE(e, n) {
        const int64_t o = e / block_inner, j = e % block_inner;
        const int64_t wide = o * wide_inner + offset + j;
        if (block_to_wide)
            dst[wide] = src[e];
        else
            dst[e] = src[wide];
    }
}

}  // namespace

void CudaBackend::gather_rows(const float* x, const int32_t* idx, float* y, int64_t rows, int64_t cols) {
    if (rows <= 0) return;
    gather_rows_kernel<<<grid_for(rows), kThreads, 0, stream_>>>(x, idx, y, rows, cols);
    CW_LAUNCH_CHECK("gather_rows_kernel");
}

void CudaBackend::gather_rows_backward(const float* gy, const int32_t* idx, float* gx, int64_t rows, int64_t cols) {
    const int64_t n = rows * cols;
    if (n <= 0) return;
    gather_rows_backward_kernel<<<grid_for(n), kThreads, 0, stream_>>>(gy, idx, gx, cols, n);
    CW_LAUNCH_CHECK("gather_rows_backward_kernel");
}

void CudaBackend::one_hot(const int32_t* labels, float* y, int64_t rows, int64_t cols) {
    const int64_t n = rows * cols;
    if (n <= 0) return;
    one_hot_kernel<<<grid_for(n), kThreads, 0, stream_>>>(labels, y, cols, n);
    CW_LAUNCH_CHECK("one_hot_kernel");
}

void CudaBackend::copy_block(const float* src, float* dst, int64_t outer, int64_t block_inner, int64_t wide_inner,
                             int64_t offset, bool block_to_wide) {
    const int64_t n = outer * block_inner;
    if (n <= 0) return;
    copy_block_kernel<<<grid_for(n), kThreads, 0, stream_>>>(src, dst, block_inner, wide_inner, offset,
                                                             block_to_wide, n);
    CW_LAUNCH_CHECK("copy_block_kernel");
}

}  // namespace cw::cuda
