// Max and average pooling over NCHW planes, own kernels (cuDNN's max pooling has no argmax output, and own
// kernels reproduce the CPU exactly). Forward: one thread per output. Backward: one thread per INPUT element
// that gathers from the outputs whose window covers it, in the same (oh, ow) order in which the CPU scatters, so
// the sums match the CPU bit for bit and need no atomics.
#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"
#include "engine/cuda/index_math.h"

namespace cw::cuda {

namespace {

__global__ void maxpool_forward_kernel(const float* x, float* y, int32_t* argmax, PoolGeometry g, int64_t oh_n,
                                       int64_t ow_n, int64_t total) {
    CW_GRID_STRIDE(o, total) {
        const int64_t ow = o % ow_n, oh = (o / ow_n) % oh_n, pl = o / (ow_n * oh_n);
        const float* xs = x + pl * g.h * g.w;
        float best = -INFINITY;
        int32_t best_at = -1;
        for (int64_t kr = 0; kr < g.kernel; ++kr) {
            const int64_t ih = oh * g.stride - g.pad + kr;
            if (ih < 0 || ih >= g.h) continue;
            for (int64_t ks = 0; ks < g.kernel; ++ks) {
                const int64_t iw = ow * g.stride - g.pad + ks;
                if (iw < 0 || iw >= g.w) continue;
                const float v = xs[ih * g.w + iw];
                if (best_at < 0 || v > best || isnan(v)) {  // first element, strictly larger, or NaN (as the CPU)
                    best = v;
                    best_at = static_cast<int32_t>(ih * g.w + iw);
                }
            }
        }
        y[o] = best;
        argmax[o] = best_at;  // index within the plane; -1 if the window saw only padding
    }
}

__global__ void maxpool_backward_kernel(const float* gy, const int32_t* argmax, float* gx, PoolGeometry g,
                                        int64_t oh_n, int64_t ow_n, int64_t total) {
    CW_GRID_STRIDE(e, total) {
        const int64_t iw = e % g.w, ih = (e / g.w) % g.h, pl = e / (g.w * g.h);
        const int32_t me = static_cast<int32_t>(ih * g.w + iw);
        int64_t oh_lo, oh_hi, ow_lo, ow_hi;
        pool_covering(ih, g.kernel, g.stride, g.pad, oh_n, oh_lo, oh_hi);
        pool_covering(iw, g.kernel, g.stride, g.pad, ow_n, ow_lo, ow_hi);
        float acc = 0.f;
        for (int64_t oh = oh_lo; oh <= oh_hi; ++oh)
            for (int64_t ow = ow_lo; ow <= ow_hi; ++ow) {
                const int64_t o = (pl * oh_n + oh) * ow_n + ow;
                if (argmax[o] == me) acc += gy[o];
            }
        gx[e] = acc;
    }
}

// count_include_pad: the divisor is always kernel * kernel.
__global__ void avgpool_forward_kernel(const float* x, float* y, PoolGeometry g, int64_t oh_n, int64_t ow_n,
                                       int64_t total, float inv) {
    CW_GRID_STRIDE(o, total) {
        const int64_t ow = o % ow_n, oh = (o / ow_n) % oh_n, pl = o / (ow_n * oh_n);
        const float* xs = x + pl * g.h * g.w;
        float s = 0.f;
        for (int64_t kr = 0; kr < g.kernel; ++kr) {
            const int64_t ih = oh * g.stride - g.pad + kr;
            if (ih < 0 || ih >= g.h) continue;
            for (int64_t ks = 0; ks < g.kernel; ++ks) {
                const int64_t iw = ow * g.stride - g.pad + ks;
                if (iw >= 0 && iw < g.w) s += xs[ih * g.w + iw];
            }
        }
        y[o] = s * inv;
    }
}

__global__ void avgpool_backward_kernel(const float* gy, float* gx, PoolGeometry g, int64_t oh_n, int64_t ow_n,
                                        int64_t total, float inv) {
    CW_GRID_STRIDE(e, total) {
        const int64_t iw = e % g.w, ih = (e / g.w) % g.h, pl = e / (g.w * g.h);
        int64_t oh_lo, oh_hi, ow_lo, ow_hi;
        pool_covering(ih, g.kernel, g.stride, g.pad, oh_n, oh_lo, oh_hi);
        pool_covering(iw, g.kernel, g.stride, g.pad, ow_n, ow_lo, ow_hi);
        float acc = 0.f;
        for (int64_t oh = oh_lo; oh <= oh_hi; ++oh)
            for (int64_t ow = ow_lo; ow <= ow_hi; ++ow)  // __fmul_rn: no FMA contraction, the CPU rounds the product
                acc += __fmul_rn(gy[(pl * oh_n + oh) * ow_n + ow], inv);
        gx[e] = acc;
    }
}

}  // namespace

void CudaBackend::maxpool2d_forward(const float* x, float* y, int32_t* argmax, const PoolGeometry& g) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), total = g.n * g.c * oh_n * ow_n;
    if (total <= 0) return;
    maxpool_forward_kernel<<<grid_for(total), kThreads, 0, stream_>>>(x, y, argmax, g, oh_n, ow_n, total);
    CW_LAUNCH_CHECK("maxpool_forward_kernel");
}

void CudaBackend::maxpool2d_backward(const float* gy, const int32_t* argmax, float* gx, const PoolGeometry& g) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), total = g.n * g.c * g.h * g.w;
    if (total <= 0) return;
    if (oh_n <= 0 || ow_n <= 0) {
        fill(gx, 0.f, total);
        return;
    }
    maxpool_backward_kernel<<<grid_for(total), kThreads, 0, stream_>>>(gy, argmax, gx, g, oh_n, ow_n, total);
    CW_LAUNCH_CHECK("maxpool_backward_kernel");
}

void CudaBackend::avgpool2d_forward(const float* x, float* y, const PoolGeometry& g) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), total = g.n * g.c * oh_n * ow_n;
    if (total <= 0) return;
    const float inv = 1.f / static_cast<float>(g.kernel * g.kernel);
    avgpool_forward_kernel<<<grid_for(total), kThreads, 0, stream_>>>(x, y, g, oh_n, ow_n, total, inv);
    CW_LAUNCH_CHECK("avgpool_forward_kernel");
}

void CudaBackend::avgpool2d_backward(const float* gy, float* gx, const PoolGeometry& g) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), total = g.n * g.c * g.h * g.w;
    if (total <= 0) return;
    if (oh_n <= 0 || ow_n <= 0) {
        fill(gx, 0.f, total);
        return;
    }
    const float inv = 1.f / static_cast<float>(g.kernel * g.kernel);
    avgpool_backward_kernel<<<grid_for(total), kThreads, 0, stream_>>>(gy, gx, g, oh_n, ow_n, total, inv);
    CW_LAUNCH_CHECK("avgpool_backward_kernel");
}

}  // namespace cw::cuda
