// Max and average pooling over NCHW planes; planes are independent, so they run in parallel.
#include <cmath>
#include <limits>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/maxpool2x2.h"

namespace cw {

void CpuBackend::maxpool2d_forward(const float* x, float* y, int32_t* argmax, const PoolGeometry& g) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), planes = g.n * g.c;
    const bool two_by_two = g.kernel == 2 && g.stride == 2 && g.pad == 0;
#pragma omp parallel for schedule(static) if (planes * g.h * g.w > kParallelGrain)
    for (int64_t pl = 0; pl < planes; ++pl) {
        const float* xs = x + pl * g.h * g.w;
        if (two_by_two) {
            for (int64_t oh = 0; oh < oh_n; ++oh)
                maxpool2x2::row(xs + 2 * oh * g.w, xs + (2 * oh + 1) * g.w, y + (pl * oh_n + oh) * ow_n,
                               argmax + (pl * oh_n + oh) * ow_n, ow_n, static_cast<int32_t>(2 * oh * g.w),
                               static_cast<int32_t>((2 * oh + 1) * g.w));
            continue;
        }
        for (int64_t oh = 0; oh < oh_n; ++oh)
            for (int64_t ow = 0; ow < ow_n; ++ow) {
                float best = -std::numeric_limits<float>::infinity();
                int32_t best_at = -1;
                for (int64_t kr = 0; kr < g.kernel; ++kr) {
                    const int64_t ih = oh * g.stride - g.pad + kr;
                    if (ih < 0 || ih >= g.h) continue;
                    for (int64_t ks = 0; ks < g.kernel; ++ks) {
                        const int64_t iw = ow * g.stride - g.pad + ks;
                        if (iw < 0 || iw >= g.w) continue;
                        const float v = xs[ih * g.w + iw];
                        if (best_at < 0 || v > best || std::isnan(v)) {
                            best = v;
                            best_at = static_cast<int32_t>(ih * g.w + iw);
                        }
                    }
                }
                const int64_t o = (pl * oh_n + oh) * ow_n + ow;
                y[o] = best;
                argmax[o] = best_at;
            }
    }
}

void CpuBackend::maxpool2d_backward(const float* gy, const int32_t* argmax, float* gx, const PoolGeometry& g) {
    const int64_t p = g.out_h() * g.out_w(), planes = g.n * g.c;
#pragma omp parallel for schedule(static) if (planes * g.h * g.w > kParallelGrain)
    for (int64_t pl = 0; pl < planes; ++pl) {
        float* gs = gx + pl * g.h * g.w;
        for (int64_t i = 0; i < g.h * g.w; ++i) gs[i] = 0.f;
        for (int64_t o = 0; o < p; ++o)
            if (argmax[pl * p + o] >= 0) gs[argmax[pl * p + o]] += gy[pl * p + o];
    }
}

void CpuBackend::avgpool2d_forward(const float* x, float* y, const PoolGeometry& g) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), planes = g.n * g.c;
    const float inv = 1.f / static_cast<float>(g.kernel * g.kernel);
#pragma omp parallel for schedule(static) if (planes * g.h * g.w > kParallelGrain)
    for (int64_t pl = 0; pl < planes; ++pl) {
        const float* xs = x + pl * g.h * g.w;
        for (int64_t oh = 0; oh < oh_n; ++oh)
            for (int64_t ow = 0; ow < ow_n; ++ow) {
                float s = 0;
                for (int64_t kr = 0; kr < g.kernel; ++kr) {
                    const int64_t ih = oh * g.stride - g.pad + kr;
                    if (ih < 0 || ih >= g.h) continue;
                    for (int64_t ks = 0; ks < g.kernel; ++ks) {
                        const int64_t iw = ow * g.stride - g.pad + ks;
                        if (iw >= 0 && iw < g.w) s += xs[ih * g.w + iw];
                    }
                }
                y[(pl * oh_n + oh) * ow_n + ow] = s * inv;
            }
    }
}

void CpuBackend::avgpool2d_backward(const float* gy, float* gx, const PoolGeometry& g) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), planes = g.n * g.c;
    const float inv = 1.f / static_cast<float>(g.kernel * g.kernel);
#pragma omp parallel for schedule(static) if (planes * g.h * g.w > kParallelGrain)
    for (int64_t pl = 0; pl < planes; ++pl) {
        float* gs = gx + pl * g.h * g.w;
        for (int64_t i = 0; i < g.h * g.w; ++i) gs[i] = 0.f;
        for (int64_t oh = 0; oh < oh_n; ++oh)
            for (int64_t ow = 0; ow < ow_n; ++ow) {
                const float v = gy[(pl * oh_n + oh) * ow_n + ow] * inv;
                for (int64_t kr = 0; kr < g.kernel; ++kr) {
                    const int64_t ih = oh * g.stride - g.pad + kr;
                    if (ih < 0 || ih >= g.h) continue;
                    for (int64_t ks = 0; ks < g.kernel; ++ks) {
                        const int64_t iw = ow * g.stride - g.pad + ks;
                        if (iw >= 0 && iw < g.w) gs[ih * g.w + iw] += v;
                    }
                }
            }
    }
}

}  // namespace cw
