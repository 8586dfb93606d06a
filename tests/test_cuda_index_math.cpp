// The index arithmetic of the CUDA kernels (engine/cuda/index_math.h), checked on the host against brute force and
// the CPU backend. These run everywhere, GPU or not: they are what can be verified of the kernels without one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "engine/backend.h"
#include "engine/cuda/index_math.h"
#include "engine/ops/op_util.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw::cuda;

namespace {

// Row-major coordinates of flat index i in `shape`.
std::vector<int64_t> coords(int64_t i, const Shape& shape) {
    std::vector<int64_t> c(shape.size());
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        c[d] = i % shape[d];
        i /= shape[d];
    }
    return c;
}

// Flat index in `shape` (padded to the rank of the coordinates with leading 1s; size-1 dims broadcast).
int64_t broadcast_flat(const std::vector<int64_t>& c, const Shape& shape) {
    const Shape full = shape.empty() ? Shape(c.size(), 1) : shape;
    int64_t flat = 0;
    for (size_t d = 0; d < c.size(); ++d) flat = flat * full[d] + (full[d] == 1 ? 0 : c[d]);
    return flat;
}

std::vector<float> random_values(size_t n, uint64_t seed, int distinct) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>(rng.below(static_cast<uint64_t>(distinct)));
    return v;
}

// BLAS-semantics column-major sgemm: what cublasSgemm computes.
void column_major_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                        const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            double s = 0;
            for (int64_t l = 0; l < k; ++l) {
                const float av = ta ? a[l + i * lda] : a[i + l * lda];
                const float bv = tb ? b[j + l * ldb] : b[l + j * ldb];
                s += static_cast<double>(av) * bv;
            }
            c[i + j * ldc] = static_cast<float>(alpha * s + beta * c[i + j * ldc]);
        }
}

}  // namespace

TEST_CASE("CUDA index math: broadcast offsets equal brute force", "[cuda][index]") {
    const std::vector<std::pair<Shape, Shape>> cases = {
        {{4, 5, 6}, {4, 5, 6}}, {{2, 3, 4, 5}, {1, 3, 1, 1}}, {{2, 3, 4, 5}, {2, 1, 1, 1}},
        {{1, 3, 1, 1}, {2, 3, 4, 5}},
        {{2, 1, 4}, {1, 3, 1}}, {{3, 4}, {}},                 {{}, {3, 4}},                 {{}, {}},
        {{5, 1, 7}, {5, 6, 7}}, {{2, 1, 3, 1, 2}, {1, 4, 3, 5, 1}}};
    for (const auto& [a, b] : cases) {
        INFO(shape_str(a) << " with " << shape_str(b));
        Shape out;
        const BroadcastIndex bi = detail::broadcast_index("test", a, b, out);
        const int64_t n = shape_numel(out);
        REQUIRE(bi.numel() == n);
        for (int64_t i = 0; i < n; ++i) {
            const auto c = coords(i, out);
            int64_t ao, bo;
            broadcast_offsets(bi, i, ao, bo);
            REQUIRE(ao == broadcast_flat(c, a));
            REQUIRE(bo == broadcast_flat(c, b));
        }
    }
}

TEST_CASE("CUDA index math: the sum_to plan visits each contribution of each output once", "[cuda][index]") {
    const std::vector<std::pair<Shape, Shape>> cases = {  // {target, out}
        {{1, 3, 1, 1}, {2, 3, 4, 5}}, {{2, 1, 1, 1}, {2, 3, 4, 5}}, {{}, {3, 4}},         {{1, 1, 4}, {2, 3, 4}},
        {{2, 1, 4}, {2, 3, 4}},       {{1, 3, 1}, {2, 3, 4}},       {{5, 1, 7}, {5, 6, 7}},
        {{1, 4, 1, 5, 1}, {2, 4, 3, 5, 2}},
        {{3, 4}, {3, 4}}};
    for (const auto& [target, out] : cases) {
        INFO(shape_str(target) << " from " << shape_str(out));
        const BroadcastIndex bi = detail::reduce_index(target, out);
        const SumToPlan p = make_sum_to_plan(bi);
        const int64_t y_numel = shape_numel(target), x_numel = shape_numel(out);
        REQUIRE(p.reduce_count * y_numel == x_numel);
        std::vector<std::set<int64_t>> want(static_cast<size_t>(y_numel));
        for (int64_t xi = 0; xi < x_numel; ++xi) want[broadcast_flat(coords(xi, out), target)].insert(xi);
        for (int64_t yi = 0; yi < y_numel; ++yi) {
            std::set<int64_t> got;
            const int64_t base = sum_to_base(p, yi);
            for (int64_t r = 0; r < p.reduce_count; ++r) got.insert(base + sum_to_step(p, r));
            REQUIRE(static_cast<int64_t>(got.size()) == p.reduce_count);
            REQUIRE(got == want[yi]);
        }
    }
}

TEST_CASE("CUDA index math: argmax_beats, combined as a block reduction does, picks argmax_strided's index",
          "[cuda][index]") {
    // The block kernel's order of work, on the host: thread t scans d = t, t + T, ...; then a tree over the threads.
    auto block_argmax = [](const std::vector<float>& x, int64_t threads) {
        const int64_t dim = static_cast<int64_t>(x.size());
        std::vector<float> value(threads, 0.f);
        std::vector<int64_t> index(threads, -1);
        for (int64_t t = 0; t < threads; ++t)
            for (int64_t d = t; d < dim; d += threads)
                if (index[t] < 0 || argmax_beats(x[d], d, value[t], index[t])) {
                    value[t] = x[d];
                    index[t] = d;
                }
        for (int64_t s = threads / 2; s > 0; s /= 2)
            for (int64_t t = 0; t < s; ++t)
                if (index[t + s] >= 0 && (index[t] < 0 || argmax_beats(value[t + s], index[t + s], value[t], index[t]))) {
                    value[t] = value[t + s];
                    index[t] = index[t + s];
                }
        return index[0];
    };
    for (uint64_t seed = 1; seed <= 60; ++seed) {
        const int64_t dim = 1 + static_cast<int64_t>((seed * 37) % 700);
        std::vector<float> x = random_values(static_cast<size_t>(dim), seed, 4);  // few distinct values: ties
        if (seed % 3 == 0) x[(seed * 11) % dim] = NAN;
        if (seed % 6 == 0) x[(seed * 5) % dim] = NAN;
        if (seed % 7 == 0) x[seed % dim] = -0.f;
        for (const int64_t threads : {int64_t(1), int64_t(8), int64_t(256)}) {
            INFO("seed " << seed << ", " << threads << " threads");
            REQUIRE(block_argmax(x, threads) == argmax_strided(x.data(), 1, dim));
        }
    }
}

TEST_CASE("CUDA index math: argmax and top-k scans reproduce the CPU kernels", "[cuda][index]") {
    Backend& cpu = backend(Device::cpu());
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        const AxisView v{3, 1 + static_cast<int64_t>(seed % 9), 1 + static_cast<int64_t>(seed % 4)};
        const size_t n = static_cast<size_t>(v.outer * v.dim * v.inner);
        std::vector<float> x = random_values(n, seed, 3);  // few distinct values: ties everywhere
        if (seed % 5 == 0) x[seed % n] = NAN;
        std::vector<int32_t> want_idx(static_cast<size_t>(v.outer * v.inner));
        cpu.max_axis(x.data(), nullptr, want_idx.data(), v);
        for (int64_t o = 0; o < v.outer; ++o)
            for (int64_t i = 0; i < v.inner; ++i)
                REQUIRE(argmax_strided(x.data() + o * v.dim * v.inner + i, v.inner, v.dim) ==
                        want_idx[o * v.inner + i]);
        if (seed % 5 == 0) continue;  // top-k order is unspecified with NaN
        for (int64_t k = 1; k <= v.dim; ++k) {
            std::vector<int32_t> want(static_cast<size_t>(v.outer * k * v.inner));
            cpu.topk_axis(x.data(), nullptr, want.data(), v, k);
            for (int64_t o = 0; o < v.outer; ++o)
                for (int64_t i = 0; i < v.inner; ++i) {
                    const float* px = x.data() + o * v.dim * v.inner + i;
                    float pv = 0.f;
                    int64_t pi = -1;
                    for (int64_t r = 0; r < k; ++r) {
                        const int64_t best = topk_next(px, v.inner, v.dim, pv, pi);
                        REQUIRE(best == want[(o * k + r) * v.inner + i]);
                        pv = px[best * v.inner];
                        pi = best;
                    }
                }
        }
    }
}

TEST_CASE("CUDA index math: pooling windows covering an input equal brute force", "[cuda][index]") {
    for (int64_t kernel = 1; kernel <= 5; ++kernel)
        for (int64_t stride = 1; stride <= 4; ++stride)
            for (int64_t pad = 0; 2 * pad <= kernel; ++pad)
                for (int64_t size = kernel; size <= 12; ++size) {
                    const int64_t out_n = (size + 2 * pad - kernel) / stride + 1;
                    for (int64_t in = 0; in < size; ++in) {
                        int64_t lo, hi;
                        pool_covering(in, kernel, stride, pad, out_n, lo, hi);
                        for (int64_t o = -2; o < out_n + 2; ++o) {
                            const bool covers = o >= 0 && o < out_n && o * stride - pad <= in &&
                                                in < o * stride - pad + kernel;
                            INFO("kernel " << kernel << " stride " << stride << " pad " << pad << " size " << size
                                           << " in " << in << " out " << o);
                            REQUIRE(covers == (o >= lo && o <= hi));
                        }
                    }
                }
}

TEST_CASE("CUDA index math: channel splits tile the batch", "[cuda][index]") {
    for (int64_t outer = 1; outer <= 130; ++outer)
        for (int64_t splits = 1; splits <= std::min<int64_t>(outer, 64); ++splits) {
            int64_t next = 0;
            for (int64_t s = 0; s < splits; ++s) {
                int64_t n0, n1;
                split_range(s, splits, outer, n0, n1);
                REQUIRE(n0 == next);
                REQUIRE(n1 > n0);  // every split gets at least one sample when splits <= outer
                next = n1;
            }
            REQUIRE(next == outer);
        }
}

TEST_CASE("CUDA index math: the column-major GEMM mapping computes the row-major product", "[cuda][index]") {
    const int64_t m = 5, n = 7, k = 3, pad = 2;
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            INFO("trans_a " << ta << ", trans_b " << tb);
            const int64_t a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
            const int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
            std::vector<float> a = random_values(static_cast<size_t>(a_rows * lda), 1, 7);
            std::vector<float> b = random_values(static_cast<size_t>(b_rows * ldb), 2, 7);
            std::vector<float> want = random_values(static_cast<size_t>(m * ldc), 3, 7), got = want;
            backend(Device::cpu()).gemm(ta, tb, m, n, k, 1.5f, a.data(), lda, b.data(), ldb, 0.5f, want.data(), ldc);
            const ColumnMajorGemm cm = column_major_gemm(ta, tb, m, n, k, a.data(), lda, b.data(), ldb);
            column_major_sgemm(cm.trans_first, cm.trans_second, cm.m, cm.n, cm.k, 1.5f, cm.first, cm.ld_first,
                               cm.second, cm.ld_second, 0.5f, got.data(), ldc);
            cw_test::require_close(got, want, 1e-6);  // small integers: exact in both
        }
}

TEST_CASE("CUDA index math: allocator buckets", "[cuda][index]") {
    size_t prev = 0;
    for (size_t bytes = 1; bytes < (size_t(1) << 22); bytes = bytes * 9 / 8 + 1) {
        const size_t b = bucket_size(bytes);
        INFO("bytes " << bytes << " -> bucket " << b);
        REQUIRE(b >= bytes);
        REQUIRE(b >= 512);
        if (bytes > 512) REQUIRE(static_cast<double>(b) <= 1.25 * static_cast<double>(bytes) + 128);
        REQUIRE(b % 128 == 0);
        REQUIRE(bucket_size(b) == b);  // a block's size is its own bucket
        REQUIRE(b >= prev);           // monotone
        prev = b;
    }
    const size_t huge = size_t(1) << 42;  // the 4 TiB of the out-of-memory test
    REQUIRE(bucket_size(huge) == huge);
    REQUIRE(bucket_size((size_t(1) << 50) + 1) >= (size_t(1) << 50) + 1);
}

TEST_CASE("CUDA index math: staged uploads pick their pinned buffers", "[cuda][index]") {
    constexpr size_t KiB = size_t(1) << 10, MiB = size_t(1) << 20;
    CHECK(staging_capacity(1) == 64 * KiB);
    CHECK(staging_capacity(64 * KiB) == 64 * KiB);
    CHECK(staging_capacity(64 * KiB + 1) == 128 * KiB);
    CHECK(staging_capacity(3 * MiB) == 4 * MiB);
    using P = StagingPlan;
    // By hand: the first copy allocates; a whole dataset goes direct.
    StagingPlan p = plan_staging({}, 1000, 0);
    CHECK((p.kind == P::Allocate && p.capacity == 64 * KiB));
    CHECK(plan_staging({}, 64 * MiB + 1, 0).kind == P::Direct);
    // The smallest idle buffer that fits, not the first.
    p = plan_staging({{128 * KiB, false, 1}, {64 * KiB, false, 2}, {32 * KiB, false, 3}}, 50 * KiB, 224 * KiB);
    CHECK((p.kind == P::Reuse && p.slot == 1));
    // A busy buffer is never written: a new one while the budget lasts...
    p = plan_staging({{64 * KiB, true, 1}}, 50 * KiB, 64 * KiB);
    CHECK((p.kind == P::Allocate && p.capacity == 64 * KiB));
    // ... then the least recently used busy one that fits, after its copy.
    const std::vector<StagingSlot> full{{64 * MiB, true, 5}, {64 * MiB, true, 3}, {64 * MiB, true, 9}, {64 * MiB, true, 7}};
    p = plan_staging(full, 1 * MiB, 256 * MiB);
    CHECK((p.kind == P::WaitThenReuse && p.slot == 1));
    // Budget spent and nothing big enough: the direct copy.
    CHECK(plan_staging({{64 * KiB, true, 1}, {64 * KiB, false, 2}}, 1 * MiB, 256 * MiB).kind == P::Direct);

    // A training loop's uploads (radii, step sizes, a random start of 1.5 MiB, the next batch), each copy finishing
    // a few uploads later: after the first steps no buffer is added, nothing waits, nothing goes direct, and no
    // busy buffer is ever handed out.
    std::vector<StagingSlot> slots;
    std::vector<uint64_t> done_at;  // per slot: the upload count at which its copy finishes
    size_t pinned = 0;
    uint64_t clock = 0;
    const std::vector<size_t> step{512, 512, 1536 * KiB, 1536 * KiB + 512};
    size_t slots_after_warmup = 0;
    for (int it = 0; it < 200; ++it) {
        for (size_t bytes : step) {
            ++clock;
            for (size_t i = 0; i < slots.size(); ++i) slots[i].busy = done_at[i] > clock;
            const StagingPlan plan = plan_staging(slots, bytes, pinned);
            size_t k = plan.slot;
            if (plan.kind == P::Allocate) {
                slots.push_back({plan.capacity, false, 0});
                done_at.push_back(0);
                pinned += plan.capacity;
                k = slots.size() - 1;
            }
            REQUIRE(plan.kind != P::Direct);
            if (it >= 3) REQUIRE(plan.kind == P::Reuse);
            REQUIRE(!slots[k].busy);
            REQUIRE(slots[k].capacity >= bytes);
            slots[k].last_use = clock;
            done_at[k] = clock + 5;   // the GPU runs five uploads behind the host
        }
        if (it == 3) slots_after_warmup = slots.size();
        REQUIRE(pinned <= kStagingBudget);
    }
    CHECK(slots.size() == slots_after_warmup);
    CHECK(slots.size() <= 6);
}

TEST_CASE("CUDA index math: batch sizes sharing one cuDNN search", "[cuda][index]") {
    // (2^(k-1), 2^k] share the search of 2^k: by hand.
    CHECK(conv_search_range(1) == 1);
    CHECK(conv_search_range(2) == 2);
    CHECK(conv_search_range(3) == 4);
    CHECK(conv_search_range(128) == 128);
    CHECK(conv_search_range(129) == 256);
    CHECK(conv_search_range(250) == 256);
    CHECK(conv_search_range(287) == 512);
    CHECK(conv_search_range(10000) == 16384);
    // Brute force: every n in 1..5000 lands in a range that holds it and is under twice its size.
    for (int64_t n = 1; n <= 5000; ++n) {
        const int64_t r = conv_search_range(n);
        REQUIRE(r >= n);
        REQUIRE(r < 2 * n);
        REQUIRE((r & (r - 1)) == 0);
    }
}
