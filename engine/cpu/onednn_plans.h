// What the oneDNN convolution and matmul share: one CPU engine, a stream per calling thread, primitives that take
// their scratchpad from the caller, and a cache of built primitives. Building one JIT-compiles kernels and costs
// milliseconds, so each is built once per key (shape, direction or transposition, precision, thread count) and
// shared: immutable once built, handed out as shared pointers under a mutex, so a plan outlives a cache reset
// while a caller still runs it.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "dnnl.hpp"
#include "engine/error.h"

namespace cw::onednn {

inline dnnl::engine& cpu_engine() {
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

inline dnnl::stream& thread_stream() {
    thread_local dnnl::stream s(cpu_engine());
    return s;
}

// Every primitive runs with a scratchpad the caller owns (per thread, kept between calls).
inline dnnl::primitive_attr user_scratchpad() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

template <class Key, class Plan, class Hash>
class PlanCache {
public:
    // The plan for `key`, built by build(key) the first time; a oneDNN error becomes an Error that starts with
    // what(key) (the primitive in words).
    template <class Build, class What>
    std::shared_ptr<const Plan> get(const Key& key, Build build, What what) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = plans_.find(key);
        if (it != plans_.end()) return it->second;
        std::shared_ptr<const Plan> plan;
        try {
            plan = std::make_shared<const Plan>(build(key));
        } catch (const dnnl::error& e) {
            throw Error(what(key) + ": oneDNN cannot build it: " + e.what());
        }
        // Past this many (evaluation batches of many sizes, say) it starts afresh rather than grow without bound.
        if (plans_.size() >= kMaxPlans) plans_.clear();
        plans_.emplace(key, plan);
        return plan;
    }

    size_t size() {
        std::lock_guard<std::mutex> lock(mutex_);
        return plans_.size();
    }

private:
    static constexpr size_t kMaxPlans = 512;
    std::mutex mutex_;
    std::unordered_map<Key, std::shared_ptr<const Plan>, Hash> plans_;
};

}  // namespace cw::onednn
