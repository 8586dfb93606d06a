// FAB-T's per-sample step and bookkeeping on the GPU, one block per sample. Every formula is the CPU's
// (engine/attack_math.h); only the search for the projection's radius differs: instead of walking the kinks in
// sorted order (engine/linf_box_projection.cpp), the block bisects over the float values v in [0, max room] for the
// largest v with g(v) < |r|. The kinks at or below it are exactly those the CPU walk passes (g is monotone and the
// kinks are floats), so λ* comes from the same closed form; only the order of the double sums differs.
#include <algorithm>

#include "engine/attack_math.h"
#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"

namespace cw::cuda {

namespace {

struct BlockScratch {
    double* sums;
    float* maxima;
};

// g(v) = Σ_{w_j ≠ 0} |w_j|·min(v, room_j), summed by the block.
__device__ double reach(float v, const float* p, const float* w, bool r_up, int64_t dim, double* scratch) {
    double g = 0;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x)
        if (w[j] != 0) g += fabs(double(w[j])) * fminf(v, attack_math::fab_room(p[j], w[j], r_up));
    return block_sum(g, scratch);
}

// λ* for point p (see engine/linf_box_projection.h); INFINITY when the box cannot reach the hyperplane.
__device__ double fab_radius(const float* p, const float* w, double b, int64_t dim, bool& r_up, BlockScratch s) {
    double wp = 0;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) wp += double(w[j]) * p[j];
    const double r = b - block_sum(wp, s.sums);
    r_up = r > 0;
    if (r == 0) return 0.0;
    const double target = fabs(r);

    float top = 0.f;   // the largest room: g is flat beyond it
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x)
        if (w[j] != 0) top = fmaxf(top, attack_math::fab_room(p[j], w[j], r_up));
    top = block_max(top, s.maxima);
    if (reach(top, p, w, r_up, dim, s.sums) < target) return INFINITY;

    // Rooms are in [0, 1], and non-negative floats order like their bit patterns: bisect on the patterns, keeping
    // g(lo) < target <= g(hi). g(0) = 0 < target.
    uint32_t lo = 0, hi = __float_as_uint(top);
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (reach(__uint_as_float(mid), p, w, r_up, dim, s.sums) < target) lo = mid;
        else hi = mid;
    }
    const float passed = __uint_as_float(lo);
    double reached = 0, rest = 0;   // Σ|w_j|·room_j over the passed kinks, Σ|w_j| over the others
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
        if (w[j] == 0) continue;
        const float u = attack_math::fab_room(p[j], w[j], r_up);
        if (u <= passed) reached += fabs(double(w[j])) * u;
        else rest += fabs(double(w[j]));
    }
    reached = block_sum(reached, s.sums);
    rest = block_sum(rest, s.sums);
    return fmax((target - reached) / rest, 0.0);
}

__global__ void fab_step_kernel(float* x1, const float* x_nat, const float* grad, const float* value, int64_t n,
                                int64_t dim, float eta, float alpha_max) {
    __shared__ double sums[kThreads];
    __shared__ float maxima[kThreads];
    const BlockScratch s{sums, maxima};
    for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
        float* a = x1 + i * dim;
        const float *c = x_nat + i * dim, *w = grad + i * dim;
        double wa = 0;
        for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) wa += double(w[j]) * a[j];
        const double b = block_sum(wa, sums) - value[i];
        bool up1 = false, up2 = false;
        const double l1 = fab_radius(a, w, b, dim, up1, s);
        const double l2 = fab_radius(c, w, b, dim, up2, s);
        float n1 = 0.f, n2 = 0.f;
        for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
            n1 = fmaxf(n1, fabsf(attack_math::fab_coordinate(l1, a[j], w[j], up1)));
            n2 = fmaxf(n2, fabsf(attack_math::fab_coordinate(l2, c[j], w[j], up2)));
        }
        n1 = block_max(n1, maxima);
        n2 = block_max(n2, maxima);
        const float alpha = attack_math::fab_alpha(n1, n2, alpha_max);
        // Each thread rewrites only the coordinates it read; every read of a above happened before block_max's sync.
        for (int64_t j = threadIdx.x; j < dim; j += blockDim.x)
            a[j] = attack_math::fab_mix(a[j], attack_math::fab_coordinate(l1, a[j], w[j], up1), c[j],
                                        attack_math::fab_coordinate(l2, c[j], w[j], up2), eta, alpha);
    }
}

__global__ void fab_record_kernel(float* x1, const float* x_nat, const float* wrong, float beta, float* best_adv,
                                  float* best_dist, int64_t n, int64_t dim) {
    __shared__ float maxima[kThreads];
    for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
        if (wrong[i] == 0.f) continue;   // the same answer for the whole block
        float* a = x1 + i * dim;
        const float* c = x_nat + i * dim;
        const float previous = best_dist[i];   // read by every thread before block_max's sync lets thread 0 write
        float dist = 0.f;
        for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) dist = fmaxf(dist, fabsf(a[j] - c[j]));
        dist = block_max(dist, maxima);
        if (dist < previous) {
            for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) best_adv[i * dim + j] = a[j];
            if (threadIdx.x == 0) best_dist[i] = dist;
        }
        for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) a[j] = attack_math::fab_pull_back(a[j], c[j], beta);
    }
}

}  // namespace

void CudaBackend::fab_step(float* x1, const float* x_nat, const float* grad, const float* value, int64_t n,
                           int64_t dim, float eta, float alpha_max) {
    if (n == 0 || dim == 0) return;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(n, kMaxBlocks));
    fab_step_kernel<<<blocks, kThreads, 0, stream_>>>(x1, x_nat, grad, value, n, dim, eta, alpha_max);
    CW_LAUNCH_CHECK("fab_step_kernel");
}

void CudaBackend::fab_record(float* x1, const float* x_nat, const float* wrong, float beta, float* best_adv,
                             float* best_dist, int64_t n, int64_t dim) {
    if (n == 0 || dim == 0) return;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(n, kMaxBlocks));
    fab_record_kernel<<<blocks, kThreads, 0, stream_>>>(x1, x_nat, wrong, beta, best_adv, best_dist, n, dim);
    CW_LAUNCH_CHECK("fab_record_kernel");
}

}  // namespace cw::cuda
