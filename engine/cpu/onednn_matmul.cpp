// The bf16 GEMM: our fp32 operands rounded to bf16 by our own kernel (VCVTNEPS2BF16, the instruction oneDNN's
// reorder uses), then one oneDNN matmul primitive that reads them in their row-major layouts (a transposed operand
// is described by its strides, not copied) and writes fp32 straight into c. Primitives are cached
// (engine/cpu/onednn_plans.h), keyed by shape, transposition, c's leading dimension and the OpenMP thread count.
#include "engine/cpu/onednn_matmul.h"

#include <immintrin.h>
#include <omp.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "dnnl.hpp"
#include "engine/cpu/avx512.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/onednn_plans.h"

namespace cw::onednn_matmul {

namespace {

using dnnl::memory;
using dt = memory::data_type;

#define CW_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// rows x cols of `from` (leading dimension ld) rounded to bf16 into `to`, packed (leading dimension cols).
CW_BF16_TARGET void to_bf16(const float* from, int64_t ld, int64_t rows, int64_t cols, uint16_t* to) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
        const float* src = from + r * ld;
        uint16_t* dst = to + r * cols;
        for (int64_t i = 0; i < cols; i += 16) {
            const __mmask16 lanes = avx512::first_lanes(cols - i);
            const __m256i half = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(lanes, src + i));
            _mm256_mask_storeu_epi16(dst + i, lanes, half);
        }
    }
}

struct Key {
    int64_t m, n, k, ldc;
    bool trans_a, trans_b;
    int threads;
    bool operator==(const Key& o) const {
        return m == o.m && n == o.n && k == o.k && ldc == o.ldc && trans_a == o.trans_a && trans_b == o.trans_b &&
               threads == o.threads;
    }
};

struct KeyHash {
    size_t operator()(const Key& key) const {
        size_t h = 0;
        for (int64_t v : {key.m, key.n, key.k, key.ldc, int64_t(key.trans_a), int64_t(key.trans_b),
                          int64_t(key.threads)})
            h = h * 1000003u ^ std::hash<int64_t>()(v);
        return h;
    }
};

struct Plan {
    dnnl::matmul prim;
    memory::desc a, b, c, scratchpad;
};

// The packed bf16 operands: a is m x k (strides k, 1), or stored k x m and read transposed (strides 1, m); b alike.
Plan build_plan(const Key& key) {
    const memory::desc a({key.m, key.k}, dt::bf16, key.trans_a ? memory::dims{1, key.m} : memory::dims{key.k, 1});
    const memory::desc b({key.k, key.n}, dt::bf16, key.trans_b ? memory::dims{1, key.k} : memory::dims{key.n, 1});
    const memory::desc c({key.m, key.n}, dt::f32, memory::dims{key.ldc, 1});
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), onednn::user_scratchpad(),
                                          onednn::cpu_engine());
    return Plan{dnnl::matmul(pd), a, b, c, pd.scratchpad_desc()};
}

onednn::PlanCache<Key, Plan, KeyHash> cache;

}  // namespace

void multiply_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float* c, int64_t ldc) {
    const std::shared_ptr<const Plan> plan =
        cache.get(Key{m, n, k, ldc, trans_a, trans_b, omp_get_max_threads()}, build_plan, [](const Key& key) {
            return "oneDNN bf16 matmul (" + std::to_string(key.m) + "x" + std::to_string(key.k) + " by " +
                   std::to_string(key.k) + "x" + std::to_string(key.n) + ")";
        });
    thread_local std::vector<uint16_t> a16, b16;
    thread_local std::vector<unsigned char> scratchpad;
    a16.resize(size_t(m * k)), b16.resize(size_t(k * n)), scratchpad.resize(plan->scratchpad.get_size());
    if (trans_a) to_bf16(a, lda, k, m, a16.data());
    else to_bf16(a, lda, m, k, a16.data());
    if (trans_b) to_bf16(b, ldb, n, k, b16.data());
    else to_bf16(b, ldb, k, n, b16.data());
    dnnl::engine& engine = onednn::cpu_engine();
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(plan->a, engine, a16.data())},
                                         {DNNL_ARG_WEIGHTS, memory(plan->b, engine, b16.data())},
                                         {DNNL_ARG_DST, memory(plan->c, engine, c)}};
    if (plan->scratchpad.get_size() > 0)
        args.emplace(DNNL_ARG_SCRATCHPAD, memory(plan->scratchpad, engine, scratchpad.data()));
    plan->prim.execute(onednn::thread_stream(), args);
    onednn::thread_stream().wait();
}

size_t cached_plans() { return cache.size(); }

}  // namespace cw::onednn_matmul
