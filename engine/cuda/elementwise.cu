// Elementwise kernels: unary maps and their gradients, broadcasting binary maps and their gradients, the
// reduction of a broadcast gradient back to its operand (sum_to), axpy and masked_scale. Formulas and evaluation
// order follow engine/cpu/elementwise.cpp (sign(0) = 0, the clamp gradient passes at the bounds, min/max ties
// send the gradient to a, fmin/fmax ignore NaN; relu, leaky relu and clamp pass a NaN input through).
#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"
#include "engine/cuda/index_math.h"
#include "engine/error.h"

namespace cw::cuda {

namespace {

__device__ inline float sign_of(float v) { return static_cast<float>((v > 0.f) - (v < 0.f)); }
__device__ inline float sigmoid_of(float v) {
    return v >= 0.f ? 1.f / (1.f + expf(-v)) : expf(v) / (1.f + expf(v));  // no overflow either side
}

// The op is uniform across the grid, so the switch costs no divergence; these kernels are memory-bound.
__global__ void unary_kernel(UnaryOp op, const float* x, float* y, int64_t n, float a, float b) {
    CW_GRID_STRIDE(i, n) {
        const float v = x[i];
        float r = 0.f;
        switch (op) {
            case UnaryOp::Neg: r = -v; break;
            case UnaryOp::Exp: r = expf(v); break;
            case UnaryOp::Log: r = logf(v); break;
            case UnaryOp::Square: r = v * v; break;
            case UnaryOp::Sqrt: r = sqrtf(v); break;
            case UnaryOp::Abs: r = fabsf(v); break;
            case UnaryOp::Sign: r = sign_of(v); break;
            // NaN fails every comparison and passes through, as in PyTorch (and the CPU backend).
            case UnaryOp::Relu: r = v <= 0.f ? 0.f : v; break;
            case UnaryOp::LeakyRelu: r = v > 0.f ? v : a * v; break;
            case UnaryOp::Sigmoid: r = sigmoid_of(v); break;
            case UnaryOp::Tanh: r = tanhf(v); break;
            case UnaryOp::Silu: r = v * sigmoid_of(v); break;
            case UnaryOp::Pow: r = powf(v, a); break;
            case UnaryOp::AddScalar: r = v + a; break;
            case UnaryOp::MulScalar: r = v * a; break;
            case UnaryOp::RSubScalar: r = a - v; break;
            case UnaryOp::Clamp: {
                const float lo = v < a ? a : v;  // not fmaxf/fminf: they would replace a NaN by a bound
                r = lo > b ? b : lo;
                break;
            }
        }
        y[i] = r;
    }
}

// x: the op's input, y: its output (only the ops whose derivative is cheaper from y read it).
__global__ void unary_backward_kernel(UnaryOp op, const float* x, const float* y, const float* gy, float* gx,
                                      int64_t n, float a, float b) {
    CW_GRID_STRIDE(i, n) {
        const float g = gy[i];
        float r = 0.f;
        switch (op) {
            case UnaryOp::Neg: r = -g; break;
            case UnaryOp::Exp: r = g * y[i]; break;
            case UnaryOp::Log: r = g / x[i]; break;
            case UnaryOp::Square: r = 2.f * x[i] * g; break;
            case UnaryOp::Sqrt: r = g * 0.5f / y[i]; break;
            case UnaryOp::Abs: r = g * sign_of(x[i]); break;
            case UnaryOp::Sign: r = 0.f; break;
            case UnaryOp::Relu: r = x[i] <= 0.f ? 0.f : g; break;  // NaN input: the gradient passes (PyTorch)
            case UnaryOp::LeakyRelu: r = x[i] > 0.f ? g : a * g; break;
            case UnaryOp::Sigmoid: r = g * y[i] * (1.f - y[i]); break;
            case UnaryOp::Tanh: r = g * (1.f - __fmul_rn(y[i], y[i])); break;  // y*y rounded, as the CPU
            case UnaryOp::Silu: {
                const float s = sigmoid_of(x[i]);
                r = g * (s * (1.f + x[i] * (1.f - s)));
                break;
            }
            case UnaryOp::Pow: r = g * a * powf(x[i], a - 1.f); break;
            case UnaryOp::AddScalar: r = g; break;
            case UnaryOp::MulScalar: r = g * a; break;
            case UnaryOp::RSubScalar: r = -g; break;
            case UnaryOp::Clamp: r = (x[i] >= a && x[i] <= b) ? g : 0.f; break;  // bounds inclusive
        }
        gx[i] = r;
    }
}

// __grid_constant__: the index structs are read in place from the kernel parameters (indexed by a run-time dim),
// instead of being copied to every thread's local memory.
__global__ void binary_kernel(BinaryOp op, const float* a, const float* b, float* y,
                              const __grid_constant__ BroadcastIndex bi, int64_t n) {
    CW_GRID_STRIDE(i, n) {
        int64_t ao, bo;
        broadcast_offsets(bi, i, ao, bo);
        const float u = a[ao], v = b[bo];
        float r = 0.f;
        switch (op) {
            case BinaryOp::Add: r = u + v; break;
            case BinaryOp::Sub: r = u - v; break;
            case BinaryOp::Mul: r = u * v; break;
            case BinaryOp::Div: r = u / v; break;
            case BinaryOp::Min: r = fminf(u, v); break;
            case BinaryOp::Max: r = fmaxf(u, v); break;
            case BinaryOp::Greater: r = u > v ? 1.f : 0.f; break;
            case BinaryOp::GreaterEqual: r = u >= v ? 1.f : 0.f; break;
        }
        y[i] = r;
    }
}

// Output-shaped partial gradients; ga or gb may be null.
__global__ void binary_backward_kernel(BinaryOp op, const float* a, const float* b, const float* gy, float* ga,
                                       float* gb, const __grid_constant__ BroadcastIndex bi, int64_t n) {
    CW_GRID_STRIDE(i, n) {
        int64_t ao, bo;
        broadcast_offsets(bi, i, ao, bo);
        const float u = a[ao], v = b[bo], g = gy[i];
        float du = 0.f, dv = 0.f;
        switch (op) {
            case BinaryOp::Add: du = g; dv = g; break;
            case BinaryOp::Sub: du = g; dv = -g; break;
            case BinaryOp::Mul: du = g * v; dv = g * u; break;
            case BinaryOp::Div: du = g / v; dv = -g * u / (v * v); break;
            case BinaryOp::Min: if (u <= v) du = g; else dv = g; break;
            case BinaryOp::Max: if (u >= v) du = g; else dv = g; break;
            case BinaryOp::Greater: case BinaryOp::GreaterEqual: break;  // piecewise constant
        }
        if (ga) ga[i] = du;
        if (gb) gb[i] = dv;
    }
}

// sum_to: each y element is owned by one thread (or one block) and summed in a fixed order: deterministic,
// no atomics. The index plan is in engine/cuda/index_math.h.
__global__ void sum_to_thread_kernel(const float* x, float* y, const __grid_constant__ SumToPlan p, int64_t y_numel) {
    CW_GRID_STRIDE(yi, y_numel) {
        const int64_t base = sum_to_base(p, yi);
        double s = 0;
        for (int64_t r = 0; r < p.reduce_count; ++r) s += x[base + sum_to_step(p, r)];
        y[yi] = static_cast<float>(s);
    }
}

__global__ void sum_to_block_kernel(const float* x, float* y, const __grid_constant__ SumToPlan p, int64_t y_numel) {
    __shared__ double scratch[kThreads];
    for (int64_t yi = blockIdx.x; yi < y_numel; yi += gridDim.x) {
        const int64_t base = sum_to_base(p, yi);
        double s = 0;
        for (int64_t r = threadIdx.x; r < p.reduce_count; r += blockDim.x) s += x[base + sum_to_step(p, r)];
        s = block_sum(s, scratch);
        if (threadIdx.x == 0) y[yi] = static_cast<float>(s);
    }
}

__global__ void axpy_kernel(float alpha, const float* x, float* y, int64_t n) {
    CW_GRID_STRIDE(i, n) y[i] += alpha * x[i];
}

__global__ void masked_scale_kernel(const float* x, const float* mask, float* y, int64_t n, float scale) {
    CW_GRID_STRIDE(i, n) y[i] = x[i] * mask[i] * scale;
}

}  // namespace

void CudaBackend::unary(UnaryOp op, const float* x, float* y, int64_t n, float a, float b) {
    if (n <= 0) return;
    unary_kernel<<<grid_for(n), kThreads, 0, stream_>>>(op, x, y, n, a, b);
    CW_LAUNCH_CHECK("unary_kernel");
}

void CudaBackend::unary_backward(UnaryOp op, const float* x, const float* y, const float* gy, float* gx, int64_t n,
                                 float a, float b) {
    if (n <= 0) return;
    unary_backward_kernel<<<grid_for(n), kThreads, 0, stream_>>>(op, x, y, gy, gx, n, a, b);
    CW_LAUNCH_CHECK("unary_backward_kernel");
}

void CudaBackend::binary(BinaryOp op, const float* a, const float* b, float* y, const BroadcastIndex& bi) {
    const int64_t n = bi.numel();
    if (n <= 0) return;
    binary_kernel<<<grid_for(n), kThreads, 0, stream_>>>(op, a, b, y, bi, n);
    CW_LAUNCH_CHECK("binary_kernel");
}

void CudaBackend::binary_backward(BinaryOp op, const float* a, const float* b, const float* gy, float* ga, float* gb,
                                  const BroadcastIndex& bi) {
    const int64_t n = bi.numel();
    if (n <= 0 || (!ga && !gb)) return;
    binary_backward_kernel<<<grid_for(n), kThreads, 0, stream_>>>(op, a, b, gy, ga, gb, bi, n);
    CW_LAUNCH_CHECK("binary_backward_kernel");
}

void CudaBackend::sum_to(const float* x, float* y, const BroadcastIndex& bi, int64_t y_numel) {
    if (y_numel <= 0) return;
    const SumToPlan p = make_sum_to_plan(bi);
    // An empty x (a reduced dim of size 0) sums to zeros, as on the CPU.
    if (p.reduce_count >= 2048) {
        const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(y_numel, kMaxBlocks));
        sum_to_block_kernel<<<blocks, kThreads, 0, stream_>>>(x, y, p, y_numel);
        CW_LAUNCH_CHECK("sum_to_block_kernel");
    } else {
        sum_to_thread_kernel<<<grid_for(y_numel), kThreads, 0, stream_>>>(x, y, p, y_numel);
        CW_LAUNCH_CHECK("sum_to_thread_kernel");
    }
}

void CudaBackend::axpy(float alpha, const float* x, float* y, int64_t n) {
    if (n <= 0) return;
    axpy_kernel<<<grid_for(n), kThreads, 0, stream_>>>(alpha, x, y, n);
    CW_LAUNCH_CHECK("axpy_kernel");
}

void CudaBackend::masked_scale(const float* x, const float* mask, float* y, int64_t n, float scale) {
    if (n <= 0) return;
    masked_scale_kernel<<<grid_for(n), kThreads, 0, stream_>>>(x, mask, y, n, scale);
    CW_LAUNCH_CHECK("masked_scale_kernel");
}

}  // namespace cw::cuda
