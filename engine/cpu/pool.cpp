// Max and average pooling over NCHW planes; planes are independent, so they run in parallel.
#include <cmath>
#include <limits>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/vector_clones.h"

namespace cw {

namespace {
// One output row of the common 2x2 stride-2 unpadded max-pool, with the general loop's choice rule: the first
// maximum wins ties and a NaN always takes over (NaN propagates). Branch-free so that it vectorises.
CW_VECTOR_CLONES
void maxpool2x2_row(const float* __restrict r0, const float* __restrict r1, float* __restrict y,
                    int32_t* __restrict argmax, int64_t ow_n, int32_t r0_at, int32_t r1_at) {
    for (int64_t ow = 0; ow < ow_n; ++ow) {
        float best = r0[2 * ow];
        int32_t at = r0_at + static_cast<int32_t>(2 * ow);
        const float cand[3] = {r0[2 * ow + 1], r1[2 * ow], r1[2 * ow + 1]};
        const int32_t cand_at[3] = {at + 1, r1_at + static_cast<int32_t>(2 * ow),
                                    r1_at + static_cast<int32_t>(2 * ow) + 1};
        for (int j = 0; j < 3; ++j) {
            const bool take = cand[j] > best || cand[j] != cand[j];
            best = take ? cand[j] : best;
            at = take ? cand_at[j] : at;
        }
        y[ow] = best;
        argmax[ow] = at;
    }
}
}  // namespace

void CpuBackend::maxpool2d_forward(const float* x, float* y, int32_t* argmax, const PoolGeometry& g) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), planes = g.n * g.c;
    const bool two_by_two = g.kernel == 2 && g.stride == 2 && g.pad == 0;
#pragma omp parallel for schedule(static) if (planes * g.h * g.w > kParallelGrain)
    for (int64_t pl = 0; pl < planes; ++pl) {
        const float* xs = x + pl * g.h * g.w;
        if (two_by_two) {
            for (int64_t oh = 0; oh < oh_n; ++oh)
                maxpool2x2_row(xs + 2 * oh * g.w, xs + (2 * oh + 1) * g.w, y + (pl * oh_n + oh) * ow_n,
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
