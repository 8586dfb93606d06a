// Shared by the benchmark binaries: the median wall time of repeated runs after warm-up. `wait` runs after the
// warm-up and inside each timed run (a GPU benchmark passes its device synchronisation).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace cw_bench {

template <class F, class Wait = void (*)()>
double median_ms(F f, int warmup, int reps, Wait wait = [] {}) {
    using Clock = std::chrono::steady_clock;
    for (int i = 0; i < warmup; ++i) f();
    wait();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        auto t0 = Clock::now();
        f();
        wait();
        t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace cw_bench
