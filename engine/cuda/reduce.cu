// Reductions: whole-tensor sums (sum_all, sum_squares, count_nonfinite) in two fixed-order stages, reductions
// along the middle axis of an [outer, dim, inner] view (sum, max/argmax, top-k), and their gradients (broadcast,
// scatter). Every output element is owned by one thread or one block and summed in double in a fixed order, so
// results are bit-identical run after run. Semantics follow engine/cpu/reduce.cpp: max ties go to the first
// index and NaN wins; top-k is stable (equal values keep the lower index first).
#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"
#include "engine/cuda/index_math.h"

namespace cw::cuda {

namespace {

enum class Full { Sum, SumSquares, NonFinite };

template <Full K>
__device__ inline double full_load(const float* x, int64_t i) {
    const float v = x[i];
    if (K == Full::Sum) return v;
    if (K == Full::SumSquares) return static_cast<double>(v) * v;
    return isfinite(v) ? 0.0 : 1.0;  // counts stay exact in double far beyond any tensor size
}

// Stage 1: block b sums the grid-stride slice b of x. The grid size depends on n only (see full_blocks).
template <Full K>
__global__ void full_partial_kernel(const float* x, int64_t n, double* partial) {
    __shared__ double scratch[kThreads];
    double s = 0;
    CW_GRID_STRIDE(i, n) s += full_load<K>(x, i);
    s = block_sum(s, scratch);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Stage 2: one block adds the partials.
template <class Out>
__global__ void full_final_kernel(const double* partial, int64_t count, Out* out) {
    __shared__ double scratch[kThreads];
    double s = 0;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
    s = block_sum(s, scratch);
    if (threadIdx.x == 0) out[0] = static_cast<Out>(s);
}

// A block per output pays off when the axis is long and the outputs too few to fill the device a thread each.
bool long_axis(const AxisView& v, int64_t count) { return v.dim >= 512 && count < 65536; }

unsigned full_blocks(int64_t n) {
    return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(ceil_div(n, kThreads * 8), 1024)));
}

template <Full K, class Out>
void full_reduce(CudaBackend& be, const float* x, int64_t n, Out* out) {
    const unsigned blocks = full_blocks(n);
    Scratch partial(be, blocks * sizeof(double));
    full_partial_kernel<K><<<blocks, kThreads, 0, be.stream()>>>(x, n, partial.as<double>());
    CW_LAUNCH_CHECK("full_partial_kernel");
    full_final_kernel<Out><<<1, kThreads, 0, be.stream()>>>(partial.as<double>(), blocks, out);
    CW_LAUNCH_CHECK("full_final_kernel");
}

// One thread per output (o, i): the common case, many outputs or a short axis.
__global__ void sum_axis_thread_kernel(const float* x, float* y, AxisView v, int64_t count) {
    CW_GRID_STRIDE(j, count) {
        const int64_t o = j / v.inner, i = j % v.inner;
        const float* px = x + o * v.dim * v.inner + i;
        double s = 0;
        for (int64_t d = 0; d < v.dim; ++d) s += px[d * v.inner];
        y[j] = static_cast<float>(s);
    }
}

// One block per output: few outputs along a long axis.
__global__ void sum_axis_block_kernel(const float* x, float* y, AxisView v, int64_t count) {
    __shared__ double scratch[kThreads];
    for (int64_t j = blockIdx.x; j < count; j += gridDim.x) {
        const int64_t o = j / v.inner, i = j % v.inner;
        const float* px = x + o * v.dim * v.inner + i;
        double s = 0;
        for (int64_t d = threadIdx.x; d < v.dim; d += blockDim.x) s += px[d * v.inner];
        s = block_sum(s, scratch);
        if (threadIdx.x == 0) y[j] = static_cast<float>(s);
    }
}

// y [o, d, i] = x [o, i] * scale
__global__ void broadcast_axis_kernel(const float* x, float* y, AxisView v, float scale, int64_t n) {
    CW_GRID_STRIDE(j, n) {
        const int64_t i = j % v.inner, o = j / v.inner / v.dim;
        y[j] = x[o * v.inner + i] * scale;
    }
}

__global__ void max_axis_kernel(const float* x, float* y, int32_t* idx, AxisView v, int64_t count) {
    CW_GRID_STRIDE(j, count) {
        const int64_t o = j / v.inner, i = j % v.inner;
        const float* px = x + o * v.dim * v.inner + i;
        const int64_t best = argmax_strided(px, v.inner, v.dim);
        if (y) y[j] = px[best * v.inner];
        if (idx) idx[j] = static_cast<int32_t>(best);
    }
}

// One block per output: few outputs along a long axis (an attack's per-sample maxima over whole images). Each
// thread scans its share of the axis, then the block combines the candidates by argmax_beats.
__global__ void max_axis_block_kernel(const float* x, float* y, int32_t* idx, AxisView v, int64_t count) {
    __shared__ float values[kThreads];
    __shared__ int64_t indices[kThreads];
    const unsigned tid = threadIdx.x;
    for (int64_t j = blockIdx.x; j < count; j += gridDim.x) {
        const int64_t o = j / v.inner, i = j % v.inner;
        const float* px = x + o * v.dim * v.inner + i;
        float bv = 0.f;
        int64_t bd = -1;   // none yet (a thread past the axis's end keeps none)
        for (int64_t d = tid; d < v.dim; d += blockDim.x) {
            const float val = px[d * v.inner];
            if (bd < 0 || argmax_beats(val, d, bv, bd)) {
                bv = val;
                bd = d;
            }
        }
        values[tid] = bv;
        indices[tid] = bd;
        __syncthreads();
        for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s && indices[tid + s] >= 0 &&
                (indices[tid] < 0 || argmax_beats(values[tid + s], indices[tid + s], values[tid], indices[tid]))) {
                values[tid] = values[tid + s];
                indices[tid] = indices[tid + s];
            }
            __syncthreads();
        }
        if (tid == 0) {
            if (y) y[j] = px[indices[0] * v.inner];
            if (idx) idx[j] = static_cast<int32_t>(indices[0]);
        }
        __syncthreads();   // the next output reuses the shared arrays
    }
}

// Selection by repeated scans (topk_next): O(k * dim) per output, no scratch memory, and exactly the order of the
// CPU's stable partial sort. NaN has no place in that order: outputs then stay in range but are unspecified.
__global__ void topk_kernel(const float* x, float* y, int32_t* idx, AxisView v, int64_t k, int64_t count) {
    CW_GRID_STRIDE(j, count) {
        const int64_t o = j / v.inner, i = j % v.inner;
        const float* px = x + o * v.dim * v.inner + i;
        float pv = 0.f;
        int64_t pi = -1;  // previous pick; -1 before the first
        for (int64_t r = 0; r < k; ++r) {
            int64_t best = topk_next(px, v.inner, v.dim, pv, pi);
            if (best < 0) best = 0;  // only reachable with NaN
            const float bv = px[best * v.inner];
            const int64_t out = (o * k + r) * v.inner + i;
            if (y) y[out] = bv;
            if (idx) idx[out] = static_cast<int32_t>(best);
            pv = bv;
            pi = best;
        }
    }
}

// gx[o, idx[o,j,i], i] += gy[o,j,i]: one thread per (o, i) walks its k entries, so no two threads touch one gx.
__global__ void scatter_axis_add_kernel(const float* gy, const int32_t* idx, float* gx, AxisView v, int64_t k,
                                        int64_t count) {
    CW_GRID_STRIDE(j, count) {
        const int64_t o = j / v.inner, i = j % v.inner;
        for (int64_t r = 0; r < k; ++r) {
            const int64_t src = (o * k + r) * v.inner + i;
            const int64_t d = idx[src];
            if (d < 0 || d >= v.dim) continue;  // never from our own kernels; guards the write
            gx[(o * v.dim + d) * v.inner + i] += gy[src];
        }
    }
}

}  // namespace

void CudaBackend::sum_all(const float* x, float* y, int64_t n) {
    if (n <= 0) {
        fill(y, 0.f, 1);
        return;
    }
    full_reduce<Full::Sum, float>(*this, x, n, y);
}

float CudaBackend::sum_squares(const float* x, int64_t n) {
    if (n <= 0) return 0.f;
    Scratch out(*this, sizeof(double));
    full_reduce<Full::SumSquares, double>(*this, x, n, out.as<double>());
    double s = 0;
    copy_to_host(&s, out.as<double>(), sizeof s);
    return static_cast<float>(s);
}

int64_t CudaBackend::count_nonfinite(const float* x, int64_t n) {
    if (n <= 0) return 0;
    Scratch out(*this, sizeof(double));
    full_reduce<Full::NonFinite, double>(*this, x, n, out.as<double>());
    double s = 0;
    copy_to_host(&s, out.as<double>(), sizeof s);
    return static_cast<int64_t>(s);
}

void CudaBackend::sum_axis(const float* x, float* y, AxisView v) {
    const int64_t count = v.outer * v.inner;
    if (count <= 0) return;
    if (v.dim <= 0) {
        fill(y, 0.f, count);
        return;
    }
    if (long_axis(v, count)) {
        const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(count, kMaxBlocks));
        sum_axis_block_kernel<<<blocks, kThreads, 0, stream_>>>(x, y, v, count);
        CW_LAUNCH_CHECK("sum_axis_block_kernel");
    } else {
        sum_axis_thread_kernel<<<grid_for(count), kThreads, 0, stream_>>>(x, y, v, count);
        CW_LAUNCH_CHECK("sum_axis_thread_kernel");
    }
}

void CudaBackend::broadcast_axis(const float* x, float* y, AxisView v, float scale) {
    const int64_t n = v.outer * v.dim * v.inner;
    if (n <= 0) return;
    broadcast_axis_kernel<<<grid_for(n), kThreads, 0, stream_>>>(x, y, v, scale, n);
    CW_LAUNCH_CHECK("broadcast_axis_kernel");
}

void CudaBackend::max_axis(const float* x, float* y, int32_t* idx, AxisView v) {
    const int64_t count = v.outer * v.inner;
    if (count <= 0 || v.dim <= 0) return;
    if (long_axis(v, count)) {
        const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(count, kMaxBlocks));
        max_axis_block_kernel<<<blocks, kThreads, 0, stream_>>>(x, y, idx, v, count);
        CW_LAUNCH_CHECK("max_axis_block_kernel");
    } else {
        max_axis_kernel<<<grid_for(count), kThreads, 0, stream_>>>(x, y, idx, v, count);
        CW_LAUNCH_CHECK("max_axis_kernel");
    }
}

void CudaBackend::topk_axis(const float* x, float* y, int32_t* idx, AxisView v, int64_t k) {
    const int64_t count = v.outer * v.inner;
    if (count <= 0 || k <= 0 || v.dim <= 0) return;
    topk_kernel<<<grid_for(count), kThreads, 0, stream_>>>(x, y, idx, v, k, count);
    CW_LAUNCH_CHECK("topk_kernel");
}

void CudaBackend::scatter_axis_add(const float* gy, const int32_t* idx, float* gx, AxisView v, int64_t k) {
    const int64_t count = v.outer * v.inner;
    if (count <= 0 || k <= 0) return;
    scatter_axis_add_kernel<<<grid_for(count), kThreads, 0, stream_>>>(gy, idx, gx, v, k, count);
    CW_LAUNCH_CHECK("scatter_axis_add_kernel");
}

}  // namespace cw::cuda
