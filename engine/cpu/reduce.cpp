// Reductions along an axis ([outer, dim, inner] views), top-k, and whole-tensor sums.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/ordered_sum.h"

namespace cw {

void CpuBackend::sum_all(const float* x, float* y, int64_t n) {
    y[0] = static_cast<float>(ordered_sum(n, [x](int64_t b, int64_t e) {
        double s = 0;
        for (int64_t i = b; i < e; ++i) s += x[i];
        return s;
    }));
}

float CpuBackend::sum_squares(const float* x, int64_t n) {
    return static_cast<float>(ordered_sum(n, [x](int64_t b, int64_t e) {
        double s = 0;
        for (int64_t i = b; i < e; ++i) s += static_cast<double>(x[i]) * x[i];
        return s;
    }));
}

int64_t CpuBackend::count_nonfinite(const float* x, int64_t n) {
    int64_t bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static) if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) bad += !std::isfinite(x[i]);
    return bad;
}

void CpuBackend::sum_axis(const float* x, float* y, AxisView v) {
    const int64_t total = v.outer * v.dim * v.inner;
#pragma omp parallel for collapse(2) schedule(static) if (total > kParallelGrain)
    for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
            const float* px = x + o * v.dim * v.inner + i;
            double s = 0;
            for (int64_t d = 0; d < v.dim; ++d) s += px[d * v.inner];
            y[o * v.inner + i] = static_cast<float>(s);
        }
}

void CpuBackend::broadcast_axis(const float* x, float* y, AxisView v, float scale) {
    const int64_t total = v.outer * v.dim * v.inner;
#pragma omp parallel for collapse(2) schedule(static) if (total > kParallelGrain)
    for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t d = 0; d < v.dim; ++d) {
            const float* px = x + o * v.inner;
            float* py = y + (o * v.dim + d) * v.inner;
            for (int64_t i = 0; i < v.inner; ++i) py[i] = px[i] * scale;
        }
}

void CpuBackend::max_axis(const float* x, float* y, int32_t* idx, AxisView v) {
#pragma omp parallel for collapse(2) schedule(static) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
            const float* px = x + o * v.dim * v.inner + i;
            int64_t best = 0;
            for (int64_t d = 1; d < v.dim; ++d)
                if (px[d * v.inner] > px[best * v.inner] || std::isnan(px[d * v.inner])) {
                    best = d;
                    if (std::isnan(px[d * v.inner])) break;  // NaN wins, as in PyTorch
                }
            if (y) y[o * v.inner + i] = px[best * v.inner];
            if (idx) idx[o * v.inner + i] = static_cast<int32_t>(best);
        }
}

void CpuBackend::topk_axis(const float* x, float* y, int32_t* idx, AxisView v, int64_t k) {
#pragma omp parallel for collapse(2) schedule(static) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
            const float* px = x + o * v.dim * v.inner + i;
            std::vector<int32_t> order(static_cast<size_t>(v.dim));
            std::iota(order.begin(), order.end(), 0);
            // Largest first; equal values keep the lower index first (stable).
            std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t p, int32_t q) {
                const float a = px[p * v.inner], b = px[q * v.inner];
                return a > b || (a == b && p < q);
            });
            for (int64_t j = 0; j < k; ++j) {
                const int64_t out = (o * k + j) * v.inner + i;
                if (y) y[out] = px[order[j] * v.inner];
                if (idx) idx[out] = order[j];
            }
        }
}

void CpuBackend::scatter_axis_add(const float* gy, const int32_t* idx, float* gx, AxisView v, int64_t k) {
#pragma omp parallel for collapse(2) schedule(static) if (v.outer * k * v.inner > kParallelGrain)
    for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i)
            for (int64_t j = 0; j < k; ++j) {
                const int64_t src = (o * k + j) * v.inner + i;
                gx[(o * v.dim + idx[src]) * v.inner + i] += gy[src];
            }
}

}  // namespace cw
