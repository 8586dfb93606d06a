// Sums whose rounding does not depend on the number of threads: the range is cut into blocks of a fixed size,
// blocks are summed in parallel, and the block sums are added in block order. (An OpenMP reduction clause, or
// per-thread partial sums, would round differently for every thread count.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/cpu/cpu_backend.h"

namespace cw {

constexpr int64_t kOrderedSumBlock = 1 << 14;

// block_sum(begin, end) -> double, for consecutive blocks of [0, n).
template <class F>
double ordered_sum(int64_t n, F block_sum) {
    const int64_t blocks = (n + kOrderedSumBlock - 1) / kOrderedSumBlock;
    if (blocks <= 1) return n > 0 ? block_sum(int64_t(0), n) : 0.0;
    std::vector<double> part(static_cast<size_t>(blocks));
#pragma omp parallel for schedule(static) if (n > kParallelGrain)
    for (int64_t b = 0; b < blocks; ++b)
        part[static_cast<size_t>(b)] = block_sum(b * kOrderedSumBlock, std::min(n, (b + 1) * kOrderedSumBlock));
    double s = 0;
    for (double p : part) s += p;
    return s;
}

// [0, count) cut into `parts` consecutive ranges that differ in length by at most one: range p is
// [part_begin(p), part_begin(p + 1)).
inline int64_t part_begin(int64_t p, int64_t parts, int64_t count) { return p * count / parts; }

}  // namespace cw
