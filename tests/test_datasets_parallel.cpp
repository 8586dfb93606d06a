// datasets/parallel.h: the image decoders' pool follows the engine's thread policy (engine/threads.h), so
// CLASSWISE_THREADS, OMP_NUM_THREADS and a cgroup quota limit it as they limit the engine.
#include <catch2/catch.hpp>

#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "datasets/parallel.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/threads.h"
#include "tests/test_process.h"

using cw::data::parallel_for;
using cw::data::parallel_workers;

namespace {

class ThreadsScope {
public:
    explicit ThreadsScope(int n) : old_(cw::cpu_threads()) { cw::set_cpu_threads(n); }
    ~ThreadsScope() { cw::set_cpu_threads(old_); }

private:
    int old_;
};

// The distinct threads that ran parallel_for's items.
size_t threads_used(int64_t n) {
    std::mutex m;
    std::set<std::thread::id> ids;
    parallel_for(n, [&](int64_t) {
        std::lock_guard<std::mutex> lock(m);
        ids.insert(std::this_thread::get_id());
    });
    return ids.size();
}

}  // namespace

TEST_CASE("parallel_for: as many workers as the engine's threads, one per 64 items at most", "[datasets][threads]") {
    {
        ThreadsScope one(1);
        REQUIRE(cw::worker_threads() == 1);
        REQUIRE(parallel_workers(100000) == 1);
        REQUIRE(threads_used(100000) == 1);
    }
    {
        ThreadsScope three(3);
        REQUIRE(cw::worker_threads() == 3);
        REQUIRE(parallel_workers(100000) == 3);
        REQUIRE(parallel_workers(64 * 2) == 2);
        REQUIRE(parallel_workers(63) == 1);
        REQUIRE(parallel_workers(0) == 1);
        REQUIRE(threads_used(100000) <= 3);
    }
    // The first error stops the loop and reaches the caller.
    REQUIRE_THROWS_WITH(parallel_for(1000, [](int64_t i) {
                            if (i == 500) throw std::runtime_error("item 500");
                        }),
                        "item 500");
}

// Run in a child process with its own environment (below): prints the pool a big image folder would get.
TEST_CASE("parallel_for pool size (run by the test below)", "[.parallel_pool]") {
    std::printf("pool %lld\n", static_cast<long long>(parallel_workers(1 << 20)));
}

TEST_CASE("parallel_for: CLASSWISE_THREADS sizes the image decoders' pool", "[datasets][threads]") {
    const std::string self = (cw_test::repo_root() / "build/tests/classwise_tests").string();
    for (const char* n : {"1", "3"}) {
        const auto out = cw_test::run_shell(std::string("CLASSWISE_THREADS=") + n + " '" + self +
                                            "' '[.parallel_pool]' 2>&1");
        INFO(out.text);
        REQUIRE(out.code == 0);
        REQUIRE(out.text.find(std::string("pool ") + n + "\n") != std::string::npos);
    }
}
