#pragma once
// The index arithmetic of the CUDA kernels as plain functions, compiled for both host and device, so that
// tests/test_cuda_index_math.cpp can check them against brute force on a machine without a GPU. Kernels call
// exactly these functions; nothing here touches memory other than through its arguments.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/backend.h"
#include "engine/host_device.h"


namespace cw::cuda {

// ---- broadcasting ------------------------------------------------------------------------------------------------
// Offsets into a and b of output element i (row-major over bi.out_shape; broadcast dims have stride 0).
CW_HD void broadcast_offsets(const BroadcastIndex& bi, int64_t i, int64_t& ao, int64_t& bo) {
    if (bi.ndim == 1) {  // the common cases (same shape, tensor-scalar) need no division
        ao = i * bi.a_stride[0];
        bo = i * bi.b_stride[0];
        return;
    }
    ao = 0;
    bo = 0;
    int64_t rem = i;
    for (int d = bi.ndim - 1; d >= 0; --d) {
        const int64_t coord = rem % bi.out_shape[d];
        rem /= bi.out_shape[d];
        ao += coord * bi.a_stride[d];
        bo += coord * bi.b_stride[d];
    }
}

// sum_to: y (the broadcast operand, strides bi.a_stride, 0 where it broadcasts) = sum of x (bi.out_shape, contiguous)
// over the broadcast dims. Kept dims are those where y has a stride; y is contiguous over them, in order.
struct SumToPlan {
    int n_kept = 0, n_red = 0;
    int kept[BroadcastIndex::kMaxDims] = {};
    int red[BroadcastIndex::kMaxDims] = {};
    int64_t shape[BroadcastIndex::kMaxDims] = {};
    int64_t y_stride[BroadcastIndex::kMaxDims] = {};  // strides of y over its kept dims
    int64_t x_stride[BroadcastIndex::kMaxDims] = {};  // row-major strides of x over all dims
    int64_t reduce_count = 1;                         // product of the reduced dims (contributions per y element)
};

inline SumToPlan make_sum_to_plan(const BroadcastIndex& bi) {
    SumToPlan p;
    int64_t stride = 1;
    for (int d = bi.ndim - 1; d >= 0; --d) {
        p.shape[d] = bi.out_shape[d];
        p.x_stride[d] = stride;
        stride *= bi.out_shape[d];
        p.y_stride[d] = bi.a_stride[d];
    }
    for (int d = 0; d < bi.ndim; ++d) {
        if (bi.a_stride[d] != 0) {
            p.kept[p.n_kept++] = d;
        } else {
            p.red[p.n_red++] = d;
            p.reduce_count *= bi.out_shape[d];
        }
    }
    return p;
}

// x offset of y element yi's first contribution (all reduced coordinates 0).
CW_HD int64_t sum_to_base(const SumToPlan& p, int64_t yi) {
    int64_t xo = 0;
    for (int k = 0; k < p.n_kept; ++k) {
        const int d = p.kept[k];
        xo += (yi / p.y_stride[d]) % p.shape[d] * p.x_stride[d];
    }
    return xo;
}

// x offset, relative to the base, of contribution r (the last reduced dim varies fastest).
CW_HD int64_t sum_to_step(const SumToPlan& p, int64_t r) {
    int64_t xo = 0;
    for (int k = p.n_red - 1; k >= 0; --k) {
        const int d = p.red[k];
        xo += (r % p.shape[d]) * p.x_stride[d];
        r /= p.shape[d];
    }
    return xo;
}

// ---- reductions along an axis (values px[d * stride], d < dim) ---------------------------------------------------
CW_HD bool is_nan(float v) { return v != v; }

// argmax: ties keep the first index; the first NaN wins (PyTorch).
CW_HD int64_t argmax_strided(const float* px, int64_t stride, int64_t dim) {
    int64_t best = 0;
    float bv = px[0];
    for (int64_t d = 1; d < dim; ++d) {
        const float val = px[d * stride];
        if (val > bv || is_nan(val)) {
            best = d;
            bv = val;
            if (is_nan(val)) break;
        }
    }
    return best;
}

// The same order as a rule between two candidates (value v at index d against w at e), for reductions that split
// the axis between threads: a NaN beats any number and the lower-indexed NaN beats a later one; otherwise the
// larger value wins and a tie goes to the lower index. Combined in any grouping, it picks argmax_strided's index.
CW_HD bool argmax_beats(float v, int64_t d, float w, int64_t e) {
    if (is_nan(v) || is_nan(w)) return is_nan(v) && (!is_nan(w) || d < e);
    return v > w || (v == w && d < e);
}

// Top-k by repeated scans: the next pick is the largest element in the order (value descending, index ascending)
// that comes after the previous pick (prev < 0: none yet). Returns -1 only when nothing qualifies (NaN inputs).
CW_HD int64_t topk_next(const float* px, int64_t stride, int64_t dim, float prev_value, int64_t prev) {
    int64_t best = -1;
    float bv = 0.f;
    for (int64_t d = 0; d < dim; ++d) {
        const float val = px[d * stride];
        if (prev >= 0 && !(val < prev_value || (val == prev_value && d > prev))) continue;
        if (best < 0 || val > bv) {  // d ascends, so a tie keeps the lower index
            best = d;
            bv = val;
        }
    }
    return best;
}

// ---- pooling -----------------------------------------------------------------------------------------------------
// Outputs along one axis whose window [o*stride - pad, o*stride - pad + kernel) contains input coordinate `in`
// (0 <= in): o in [lo, hi], empty when hi < lo.
CW_HD void pool_covering(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t out_n, int64_t& lo,
                         int64_t& hi) {
    const int64_t t = in + pad - kernel + 1;  // o * stride >= t
    lo = t <= 0 ? 0 : (t + stride - 1) / stride;
    hi = (in + pad) / stride;  // o * stride <= in + pad
    if (hi > out_n - 1) hi = out_n - 1;
}

// ---- per-channel split reductions ------------------------------------------------------------------------------
// Split s of `splits` covers samples [n0, n1) of `outer`; the splits tile [0, outer) in order.
CW_HD void split_range(int64_t s, int64_t splits, int64_t outer, int64_t& n0, int64_t& n1) {
    n0 = s * outer / splits;
    n1 = (s + 1) * outer / splits;
}

// ---- GEMM --------------------------------------------------------------------------------------------------------
// The column-major call (cuBLAS) that computes the row-major C[m,n] = alpha op(A) op(B) + beta C: a row-major
// matrix read column-major is its transpose, so C^T = op(B)^T op(A)^T, i.e. the operands swap, m and n swap, and
// each operand keeps its transpose flag and leading dimension.
struct ColumnMajorGemm {
    bool trans_first, trans_second;
    int64_t m, n, k;
    const float* first;
    int64_t ld_first;
    const float* second;
    int64_t ld_second;
};

inline ColumnMajorGemm column_major_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                                         int64_t lda, const float* b, int64_t ldb) {
    return {trans_b, trans_a, n, m, k, b, ldb, a, lda};
}

// ---- caching allocator -----------------------------------------------------------------------------------------
// Block size for a request: at least 512 bytes, then four buckets per octave (p/2 + j*p/8, j = 1..4), so at most
// 25% of a block is unused. Requests beyond 64 TiB (none real) are only rounded to 512 bytes.
inline size_t bucket_size(size_t bytes) {
    constexpr size_t kMinBlock = 512;
    if (bytes <= kMinBlock) return kMinBlock;
    if (bytes > (size_t(1) << 46)) return (bytes + kMinBlock - 1) / kMinBlock * kMinBlock;
    size_t p = kMinBlock;
    while (p < bytes) p <<= 1;  // p/2 < bytes <= p, p >= 1024
    const size_t step = p / 8;
    size_t s = p / 2 + step;
    while (s < bytes) s += step;
    return s;
}

// ---- staged uploads -----------------------------------------------------------------------------------------
// A host-to-device copy from pageable memory must finish before the caller may reuse its buffer, so it waits for
// everything queued before it. Copied first into a pinned staging buffer, it is queued like a kernel and the host
// runs on (drawing the next random start while the GPU still trains). Each buffer is reused once the copy that last
// read it has finished (an event per buffer). Which buffer a copy takes:
struct StagingSlot {
    size_t capacity;
    bool busy;          // its last copy has not finished
    uint64_t last_use;  // larger = more recent
};
struct StagingPlan {
    enum Kind { Reuse, Allocate, WaitThenReuse, Direct } kind;
    size_t slot = 0;      // Reuse, WaitThenReuse
    size_t capacity = 0;  // Allocate
};
constexpr size_t kStagingMaxCopy = size_t(64) << 20;  // larger copies (whole datasets) wait as before: Direct
constexpr size_t kStagingBudget = size_t(256) << 20;  // pinned bytes held at most
constexpr size_t kStagingMinSlot = size_t(64) << 10;

// A new buffer: the power of two that holds the copy, at least kStagingMinSlot.
inline size_t staging_capacity(size_t bytes) {
    size_t c = kStagingMinSlot;
    while (c < bytes) c <<= 1;
    return c;
}

// The smallest idle buffer that fits; else a new one within the budget; else wait for the least recently used busy
// buffer that fits; else (every buffer too small, budget spent) the direct, waiting copy.
inline StagingPlan plan_staging(const std::vector<StagingSlot>& slots, size_t bytes, size_t pinned_total) {
    if (bytes > kStagingMaxCopy) return {StagingPlan::Direct};
    const size_t none = slots.size();
    size_t idle = none, oldest = none;
    for (size_t i = 0; i < slots.size(); ++i) {
        if (slots[i].capacity < bytes) continue;
        if (!slots[i].busy && (idle == none || slots[i].capacity < slots[idle].capacity)) idle = i;
        if (slots[i].busy && (oldest == none || slots[i].last_use < slots[oldest].last_use)) oldest = i;
    }
    if (idle != none) return {StagingPlan::Reuse, idle};
    const size_t capacity = staging_capacity(bytes);
    if (pinned_total + capacity <= kStagingBudget) return {StagingPlan::Allocate, 0, capacity};
    if (oldest != none) return {StagingPlan::WaitThenReuse, oldest};
    return {StagingPlan::Direct};
}

// ---- cuDNN algorithm search ------------------------------------------------------------------------------------
// The batch sizes that share one timed search: (2^(k-1), 2^k] for k >= 1. An attack that shrinks its batch as
// samples break (Square, APGD-T, FAB-T rounds) meets a new batch size at almost every step, and a full
// cudnnFind*Ex per size costs far more than the step; the algorithm found for the first size of a range serves the
// rest of it, with its workspace sized for each actual batch.
inline int64_t conv_search_range(int64_t n) {
    int64_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

}  // namespace cw::cuda
