// Host memory with a size-keyed cache: training allocates the same activation sizes every step, and handing
// large blocks back to the OS each time costs page faults on every reuse.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/error.h"

namespace cw {

namespace {
constexpr size_t kAlign = 64;
constexpr size_t kMaxCachedBytes = size_t(6) << 30;

struct HostCache {
    std::mutex mu;
    std::unordered_map<size_t, std::vector<void*>> free_blocks;
    size_t cached_bytes = 0;
};
HostCache& cache() {
    static HostCache* c = new HostCache;  // never destroyed: tensors may be freed during static destruction
    return *c;
}
size_t rounded(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
}  // namespace

void* CpuBackend::allocate(size_t bytes) {
    const size_t size = rounded(bytes);
    {
        auto& c = cache();
        std::lock_guard<std::mutex> lock(c.mu);
        auto it = c.free_blocks.find(size);
        if (it != c.free_blocks.end() && !it->second.empty()) {
            void* p = it->second.back();
            it->second.pop_back();
            c.cached_bytes -= size;
            return p;
        }
    }
    void* p = std::aligned_alloc(kAlign, size);
    if (!p) {
        release_cached_memory();
        p = std::aligned_alloc(kAlign, size);
    }
    if (!p) throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
    return p;
}

void CpuBackend::deallocate(void* p, size_t bytes) {
    const size_t size = rounded(bytes);
    auto& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.cached_bytes + size > kMaxCachedBytes) {
        std::free(p);
        return;
    }
    c.free_blocks[size].push_back(p);
    c.cached_bytes += size;
}

void CpuBackend::release_cached_memory() {
    auto& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    for (auto& [size, blocks] : c.free_blocks)
        for (void* p : blocks) std::free(p);
    c.free_blocks.clear();
    c.cached_bytes = 0;
}

void CpuBackend::do_copy_to_host(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void CpuBackend::do_copy_from_host(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void CpuBackend::copy(void* dst, const void* src, size_t bytes) {
    if (dst != src) std::memcpy(dst, src, bytes);
}

void CpuBackend::fill(float* y, float value, int64_t n) {
#pragma omp parallel for schedule(static) if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) y[i] = value;
}

void CpuBackend::fill_i32(int32_t* y, int32_t value, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = value;
}

void CpuBackend::add_i32(int32_t* y, int32_t value, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += value;
}

CpuBackend& cpu_backend() {
    static CpuBackend* b = (configure_cpu_threads(), new CpuBackend);  // retried (and rethrown) if it throws
    return *b;
}

}  // namespace cw
