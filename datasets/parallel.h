#pragma once
// Runs fn(i) for i in [0, n) on a few std::threads; used to decode image folders (100k JPEGs) in parallel.
// The first exception thrown by any fn is rethrown to the caller after all threads stop.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/threads.h"

namespace cw::data {

// The threads parallel_for uses for n items: the engine's thread count (engine/threads.h: CLASSWISE_THREADS, the
// cgroup quota ...), at most one per 64 items (a thread costs more than decoding a few images), at least one.
inline int64_t parallel_workers(int64_t n) {
    return std::max<int64_t>(1, std::min<int64_t>(worker_threads(), n / 64));
}

template <class Fn>
void parallel_for(int64_t n, Fn fn) {
    const int64_t workers = parallel_workers(n);
    std::atomic<int64_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr first_error;
    std::mutex error_mutex;
    auto work = [&] {
        for (int64_t i; !failed && (i = next.fetch_add(1)) < n;) {
            try {
                fn(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!first_error) first_error = std::current_exception();
                failed = true;
            }
        }
    };
    std::vector<std::thread> threads;
    for (int64_t t = 1; t < workers; ++t) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
    if (first_error) std::rethrow_exception(first_error);
}

}  // namespace cw::data
