// Shared by the benchmark binaries: the median (or best) wall time of repeated runs after warm-up. `wait` runs
// after the warm-up and inside each timed run (a GPU benchmark passes its device synchronisation).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace cw_bench {

template <class F, class Wait = void (*)()>
std::vector<double> sorted_times_ms(F f, int warmup, int reps, Wait wait = [] {}) {
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
    return t;
}

template <class F, class Wait = void (*)()>
double median_ms(F f, int warmup, int reps, Wait wait = [] {}) {
    const std::vector<double> t = sorted_times_ms(f, warmup, reps, wait);
    return t[t.size() / 2];
}

// A machine's peak (the reference sgemm rate) is its fastest run: slower ones only measure interference.
template <class F>
double best_ms(F f, int warmup, int reps) {
    return sorted_times_ms(f, warmup, reps).front();
}

}  // namespace cw_bench
