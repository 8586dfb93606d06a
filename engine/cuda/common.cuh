#pragma once
// Shared by every engine/cuda/*.cu file: checked CUDA/cuBLAS/cuDNN calls (each failure is a cw::DeviceError that
// names the call, file and line), launch-size helpers, and the fixed-order block reduction that every reduction
// kernel uses, so results never depend on thread scheduling (no atomics anywhere in the backend).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <climits>

namespace cw::cuda {

[[noreturn]] void throw_cuda(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line);
[[noreturn]] void throw_cudnn(cudnnStatus_t s, const char* call, const char* file, int line);

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
    if (e != cudaSuccess) throw_cuda(e, call, file, line);
}
inline void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
    if (s != CUBLAS_STATUS_SUCCESS) throw_cublas(s, call, file, line);
}
inline void check_cudnn(cudnnStatus_t s, const char* call, const char* file, int line) {
    if (s != CUDNN_STATUS_SUCCESS) throw_cudnn(s, call, file, line);
}

}  // namespace cw::cuda

#define CW_CUDA_CHECK(call) ::cw::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define CW_CUBLAS_CHECK(call) ::cw::cuda::check_cublas((call), #call, __FILE__, __LINE__)
#define CW_CUDNN_CHECK(call) ::cw::cuda::check_cudnn((call), #call, __FILE__, __LINE__)
// After a <<<...>>> launch: reports a bad launch configuration (or an earlier sticky error) at this line.
#define CW_LAUNCH_CHECK(kernel_name) \
    ::cw::cuda::check_cuda(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__)

namespace cw::cuda {

constexpr int kThreads = 256;            // block size of the elementwise and per-row kernels (a power of two)
constexpr int64_t kMaxBlocks = 1 << 16;  // grid-stride loops cover anything larger

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks for a grid-stride loop over n items (n > 0; launchers return early on n == 0, a 0-block grid is invalid).
inline unsigned grid_for(int64_t n, int threads = kThreads) {
    return static_cast<unsigned>(std::max<int64_t>(1, std::min(ceil_div(n, threads), kMaxBlocks)));
}

#define CW_GRID_STRIDE(i, n)                                                                         \
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);          \
         i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// q = j / d, r = j % d. 64-bit division costs several times a 32-bit one; `narrow` (uniform across the grid, set
// by the launcher with fits_32bit when every index of the kernel is below 2^32) selects the 32-bit path.
__device__ inline void divmod(int64_t j, int64_t d, bool narrow, int64_t& q, int64_t& r) {
    if (narrow) {
        const uint32_t j32 = static_cast<uint32_t>(j), d32 = static_cast<uint32_t>(d);
        q = j32 / d32;
        r = j32 % d32;
    } else {
        q = j / d;
        r = j % d;
    }
}
inline bool fits_32bit(int64_t n) { return n >= 0 && n <= static_cast<int64_t>(UINT32_MAX); }

// Channel of element j of an [outer, dim, inner] tensor.
__device__ inline int64_t channel_of(int64_t j, int64_t inner, int64_t dim, bool narrow) {
    int64_t q, r;
    divmod(j, inner, narrow, q, r);
    divmod(q, dim, narrow, q, r);
    return r;
}

// Sum of v over the block in a fixed tree order (deterministic). Every thread of the block must call it;
// blockDim.x must be a power of two <= 1024 and `scratch` must hold blockDim.x values. Returns the total to every
// thread, and leaves scratch free for reuse.
template <class T>
__device__ T block_sum(T v, T* scratch) {
    const unsigned tid = threadIdx.x;
    scratch[tid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) scratch[tid] += scratch[tid + s];
        __syncthreads();
    }
    const T total = scratch[0];
    __syncthreads();
    return total;
}

// Same for the maximum (row softmax). fmaxf skips NaN, but a NaN logit still turns its whole row into NaN through
// the following sum of exponentials, exactly as on the CPU.
__device__ inline float block_max(float v, float* scratch) {
    const unsigned tid = threadIdx.x;
    scratch[tid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) scratch[tid] = fmaxf(scratch[tid], scratch[tid + s]);
        __syncthreads();
    }
    const float m = scratch[0];
    __syncthreads();
    return m;
}

}  // namespace cw::cuda
