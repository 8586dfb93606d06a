// Device memory: the caching allocator, host<->device copies, fills, and the error helpers behind the CW_*_CHECK
// macros.
#include <cstdio>
#include <string>

#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"
#include "engine/cuda/index_math.h"
#include "engine/error.h"

namespace cw::cuda {

// ---- errors ----------------------------------------------------------------------------------------------------
namespace {
std::string where(const char* call, const char* file, int line) {
    return std::string(" in ") + call + " at " + file + ":" + std::to_string(line);
}
}  // namespace

void throw_cuda(cudaError_t e, const char* call, const char* file, int line) {
    throw DeviceError(std::string("CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")" +
                      where(call, file, line));
}
void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
    throw DeviceError(std::string("cuBLAS error ") + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) + ")" +
                      where(call, file, line));
}
void throw_cudnn(cudnnStatus_t s, const char* call, const char* file, int line) {
    throw DeviceError(std::string("cuDNN error ") + cudnnGetErrorString(s) + where(call, file, line));
}

// ---- allocator -------------------------------------------------------------------------------------------------
namespace {
double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }
}  // namespace

void* DeviceAllocator::allocate(size_t bytes) {
    if (bytes == 0) return nullptr;
    const size_t size = bucket_size(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    void* p = nullptr;
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        cached_ -= size;
    } else {
        cudaError_t e = cudaMalloc(&p, size);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();  // out-of-memory is not sticky: clear it and retry with the cache emptied
            const size_t cached_before = cached_;
            if (cached_before > 0) ++cache_flushes_;
            release_cached_locked();
            e = cudaMalloc(&p, size);
            if (e == cudaErrorMemoryAllocation) {
                (void)cudaGetLastError();
                char msg[256];
                std::snprintf(msg, sizeof msg,
                              "CUDA out of memory allocating %.1f MiB (%.1f MiB cached, %.1f MiB in use", mib(bytes),
                              mib(cached_before), mib(in_use_));
                std::string text = msg;
                size_t free_b = 0, total_b = 0;
                if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
                    std::snprintf(msg, sizeof msg, "; the GPU has %.1f MiB free of %.1f MiB", mib(free_b),
                                  mib(total_b));
                    text += msg;
                } else {
                    (void)cudaGetLastError();
                }
                throw DeviceError(text + ")");
            }
        }
        check_cuda(e, "cudaMalloc", __FILE__, __LINE__);
    }
    in_use_ += size;
    peak_in_use_ = std::max(peak_in_use_, in_use_);
    peak_reserved_ = std::max(peak_reserved_, in_use_ + cached_);
    return p;
}

void DeviceAllocator::deallocate(void* p, size_t bytes) {
    if (!p) return;
    const size_t size = bucket_size(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ -= size;
    free_[size].push_back(p);
    cached_ += size;
}

void DeviceAllocator::release_cached() {
    std::lock_guard<std::mutex> lock(mu_);
    release_cached_locked();
}

void DeviceAllocator::release_cached_locked() {
    if (cached_ == 0) return;
    // A cached block may still be read by queued kernels (it was freed on the host, not on the stream).
    CW_CUDA_CHECK(cudaDeviceSynchronize());
    for (auto& [size, blocks] : free_)
        for (void* p : blocks) CW_CUDA_CHECK(cudaFree(p));
    free_.clear();
    cached_ = 0;
}

DeviceAllocator::Stats DeviceAllocator::stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return {static_cast<int64_t>(in_use_), static_cast<int64_t>(cached_), static_cast<int64_t>(peak_in_use_),
            static_cast<int64_t>(peak_reserved_), cache_flushes_};
}

void DeviceAllocator::reset_peak() {
    std::lock_guard<std::mutex> lock(mu_);
    peak_in_use_ = in_use_;
    peak_reserved_ = in_use_ + cached_;
}

Scratch::Scratch(CudaBackend& b, size_t bytes) : b_(b), bytes_(bytes), p_(b.allocate(bytes)) {}
Scratch::~Scratch() { b_.deallocate(p_, bytes_); }

// ---- backend memory methods --------------------------------------------------------------------------------------
void* CudaBackend::allocate(size_t bytes) { return alloc_.allocate(bytes); }
void CudaBackend::deallocate(void* p, size_t bytes) { alloc_.deallocate(p, bytes); }

void CudaBackend::do_copy_to_host(void* host_dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    CW_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    CW_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the caller reads host_dst next
}

void CudaBackend::do_copy_from_host(void* dst, const void* host_src, size_t bytes) {
    if (bytes == 0) return;
    if (staging_.upload(dst, host_src, bytes, stream_)) return;   // queued from a pinned buffer; no wait
    CW_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_));
    // The caller may free or reuse host_src as soon as we return (often a temporary std::vector).
    CW_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::copy(void* dst, const void* src, size_t bytes) {
    if (bytes == 0 || dst == src) return;
    CW_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaBackend::synchronize() { CW_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

std::string CudaBackend::memory_summary() {
    const DeviceAllocator::Stats s = alloc_.stats();
    const double gib = 1024.0 * 1024.0 * 1024.0;
    char line[256];
    // Emptying the cache costs a device-wide synchronisation and fresh cudaMallocs: many flushes mean the batch is
    // too large for the card (with batch sizes that shrink step by step, freed blocks of old sizes fill the cache).
    std::snprintf(line, sizeof line,
                  "GPU memory: peak %.1f GiB held by tensors, %.1f GiB reserved; cache emptied %lld times to retry an "
                  "allocation",
                  s.peak_in_use / gib, s.peak_reserved / gib, static_cast<long long>(s.cache_flushes));
    return line;
}

namespace {
template <class T>
__global__ void fill_kernel(T* y, T value, int64_t n) {
    CW_GRID_STRIDE(i, n) y[i] = value;
}
__global__ void add_i32_kernel(int32_t* y, int32_t value, int64_t n) {
    CW_GRID_STRIDE(i, n) y[i] += value;
}
}  // namespace

void CudaBackend::fill(float* y, float value, int64_t n) {
    if (n <= 0) return;
    fill_kernel<float><<<grid_for(n), kThreads, 0, stream_>>>(y, value, n);
    CW_LAUNCH_CHECK("fill_kernel<float>");
}

void CudaBackend::fill_i32(int32_t* y, int32_t value, int64_t n) {
    if (n <= 0) return;
    fill_kernel<int32_t><<<grid_for(n), kThreads, 0, stream_>>>(y, value, n);
    CW_LAUNCH_CHECK("fill_kernel<int32_t>");
}

void CudaBackend::add_i32(int32_t* y, int32_t value, int64_t n) {
    if (n <= 0) return;
    add_i32_kernel<<<grid_for(n), kThreads, 0, stream_>>>(y, value, n);
    CW_LAUNCH_CHECK("add_i32_kernel");
}

}  // namespace cw::cuda
