// The plugin's entry points: cw_cuda_create_backend (called once by engine/cuda_plugin.cpp), the run-time switches
// (TF32, deterministic mode, cuDNN benchmark), and the C exports of engine/cuda/plugin_api.h. Creation never
// throws and never aborts: any failure (no driver, no GPU, a GPU this build has no code for, a CUDA library that
// will not start) comes back as nullptr plus a one-line reason.
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>

#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"
#include "engine/cuda/plugin_api.h"
#include "engine/cuda_backend.h"
#include "engine/error.h"

namespace cw::cuda {

namespace {
std::atomic<bool> g_tf32{true};
std::atomic<bool> g_deterministic{false};
std::atomic<bool> g_cudnn_benchmark{true};
std::atomic<bool> g_staged_uploads{true};

// 0/false/off/no and 1/true/on/yes (any case); anything else keeps the default.
bool env_flag(const char* name, bool fallback) {
    const char* v = std::getenv(name);
    if (!v) return fallback;
    std::string s(v);
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (s == "0" || s == "false" || s == "off" || s == "no") return false;
    if (s == "1" || s == "true" || s == "on" || s == "yes") return true;
    return fallback;
}
}  // namespace

bool tf32_enabled() { return g_tf32.load(std::memory_order_relaxed); }
bool deterministic_enabled() { return g_deterministic.load(std::memory_order_relaxed); }
bool cudnn_benchmark_enabled() { return g_cudnn_benchmark.load(std::memory_order_relaxed); }
bool staged_uploads_enabled() { return g_staged_uploads.load(std::memory_order_relaxed); }
void set_tf32(bool on) { g_tf32.store(on); }
void set_deterministic(bool on) { g_deterministic.store(on); }
void set_cudnn_benchmark(bool on) { g_cudnn_benchmark.store(on); }
void set_staged_uploads(bool on) { g_staged_uploads.store(on); }

CudaBackend::CudaBackend() {
    try {
        CW_CUDA_CHECK(cudaSetDevice(0));
        // Non-blocking: the legacy default stream (which we never use) does not serialise against ours.
        CW_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        CW_CUBLAS_CHECK(cublasCreate(&cublas_));
        CW_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
        CW_CUDNN_CHECK(cudnnCreate(&cudnn_));
        CW_CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
    } catch (...) {  // the destructor does not run for a half-built object: free what exists
        if (cudnn_) cudnnDestroy(cudnn_);
        if (cublas_) cublasDestroy(cublas_);
        if (stream_) cudaStreamDestroy(stream_);
        throw;
    }
}

namespace {

std::mutex g_create_mu;
std::atomic<CudaBackend*> g_backend{nullptr};

void write_text(char* buf, unsigned long len, const std::string& text) {
    if (!buf || len == 0) return;
    std::snprintf(buf, len, "%s", text.c_str());
}

std::string version_str(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// Why cudaGetDeviceCount failed, in words a user can act on.
std::string no_device_reason(cudaError_t e) {
    const std::string detail = std::string(" (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
    if (e == cudaErrorNoDevice) return "no CUDA-capable GPU is visible" + detail;
    if (e == cudaErrorInsufficientDriver) {
        int driver = 0;
        if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0)
            return "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)";
        return "the NVIDIA driver supports CUDA " + version_str(driver) + " but this plugin needs CUDA " +
               version_str(CUDART_VERSION) + " or newer" + detail;
    }
    return std::string("CUDA cannot start: ") + cudaGetErrorName(e) + detail;
}

// Proves that our kernels load and run on this GPU (catches a GPU without code in this build, or a broken JIT).
void self_test(CudaBackend& b) {
    float* p = static_cast<float*>(b.allocate(4 * sizeof(float)));
    float host[4] = {0, 0, 0, 0};
    try {
        b.fill(p, 1.5f, 4);
        b.copy_to_host(host, p, sizeof host);
    } catch (...) {
        b.deallocate(p, 4 * sizeof(float));
        throw;
    }
    b.deallocate(p, 4 * sizeof(float));
    for (float v : host)
        if (v != 1.5f) throw DeviceError("the GPU self-test (fill + copy back) returned wrong values");
}

CudaBackend* create(std::string& why) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        why = no_device_reason(e);
        return nullptr;
    }
    if (count == 0) {
        why = "no CUDA-capable GPU is visible (cudaGetDeviceCount returned 0)";
        return nullptr;
    }
    cudaDeviceProp prop{};
    CW_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major < 9) {
        why = std::string("GPU 0 (") + prop.name + ") has compute capability " + std::to_string(prop.major) + "." +
              std::to_string(prop.minor) +
              "; this plugin carries code for compute capability 9.0 and newer only (add a -gencode for it to "
              "NVCCFLAGS and rebuild)";
        return nullptr;
    }
    set_tf32(env_flag("CLASSWISE_TF32", true));
    set_deterministic(env_flag("CLASSWISE_DETERMINISTIC", false));
    set_cudnn_benchmark(env_flag("CLASSWISE_CUDNN_BENCHMARK", true));
    set_staged_uploads(env_flag("CLASSWISE_STAGED_UPLOADS", true));
    // On a failed self-test the backend is leaked on purpose: tearing down handles after a failed launch can fail
    // in turn, and creation is attempted once per process.
    auto* b = new CudaBackend();
    self_test(*b);
    return b;
}

CudaBackend* backend_or_null() { return g_backend.load(); }

template <class F>
int guarded(char* err, unsigned long err_len, F f) {
    try {
        f();
        return 0;
    } catch (const std::exception& ex) {
        write_text(err, err_len, ex.what());
    } catch (...) {
        write_text(err, err_len, "unknown error in the CUDA plugin");
    }
    return -1;
}

}  // namespace
}  // namespace cw::cuda

using cw::cuda::backend_or_null;

extern "C" {

cw::Backend* cw_cuda_create_backend(char* err, unsigned long err_len) {
    std::lock_guard<std::mutex> lock(cw::cuda::g_create_mu);
    if (auto* b = backend_or_null()) return b;  // one backend per process
    std::string why;
    try {
        cw::cuda::CudaBackend* b = cw::cuda::create(why);
        if (b) {
            cw::cuda::g_backend.store(b);
            return b;
        }
    } catch (const std::exception& ex) {
        why = ex.what();
    } catch (...) {
        why = "unknown error while starting CUDA";
    }
    cw::cuda::write_text(err, err_len, why.empty() ? "no usable GPU" : why);
    return nullptr;
}

void cw_cuda_set_tf32(int on) { cw::cuda::set_tf32(on != 0); }
int cw_cuda_tf32(void) { return cw::cuda::tf32_enabled() ? 1 : 0; }
void cw_cuda_set_deterministic(int on) { cw::cuda::set_deterministic(on != 0); }
int cw_cuda_deterministic(void) { return cw::cuda::deterministic_enabled() ? 1 : 0; }
void cw_cuda_set_cudnn_benchmark(int on) { cw::cuda::set_cudnn_benchmark(on != 0); }
void cw_cuda_set_staged_uploads(int on) { cw::cuda::set_staged_uploads(on != 0); }
int cw_cuda_staged_uploads(void) { return cw::cuda::staged_uploads_enabled() ? 1 : 0; }

void cw_cuda_memory_stats(int64_t* in_use, int64_t* cached, int64_t* peak_in_use, int64_t* peak_reserved) {
    cw::cuda::DeviceAllocator::Stats s{0, 0, 0, 0, 0};
    if (auto* b = backend_or_null()) s = b->allocator().stats();
    if (in_use) *in_use = s.in_use;
    if (cached) *cached = s.cached;
    if (peak_in_use) *peak_in_use = s.peak_in_use;
    if (peak_reserved) *peak_reserved = s.peak_reserved;
}

void cw_cuda_reset_peak_memory(void) {
    if (auto* b = backend_or_null()) b->allocator().reset_peak();
}

int cw_cuda_release_cached_memory(char* err, unsigned long err_len) {
    return cw::cuda::guarded(err, err_len, [] {
        if (auto* b = backend_or_null()) b->allocator().release_cached();
    });
}

int cw_cuda_synchronize(char* err, unsigned long err_len) {
    return cw::cuda::guarded(err, err_len, [] {
        if (auto* b = backend_or_null()) b->synchronize();
    });
}

int cw_cuda_device_info(char* buf, unsigned long len) {
    return cw::cuda::guarded(nullptr, 0, [&] {
        cudaDeviceProp prop{};
        CW_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        char text[512];
        std::snprintf(text, sizeof text, "%s, compute capability %d.%d, %d SMs, %.1f GiB", prop.name, prop.major,
                      prop.minor, prop.multiProcessorCount,
                      static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
        cw::cuda::write_text(buf, len, text);
    });
}

}  // extern "C"

// The exports must keep the exact types their users look them up with.
static_assert(std::is_same_v<decltype(&cw_cuda_create_backend), cw_cuda_create_backend_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_set_tf32), cw_cuda_set_tf32_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_tf32), cw_cuda_tf32_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_set_deterministic), cw_cuda_set_deterministic_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_deterministic), cw_cuda_deterministic_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_set_cudnn_benchmark), cw_cuda_set_cudnn_benchmark_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_set_staged_uploads), cw_cuda_set_staged_uploads_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_staged_uploads), cw_cuda_staged_uploads_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_memory_stats), cw_cuda_memory_stats_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_reset_peak_memory), cw_cuda_reset_peak_memory_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_release_cached_memory), cw_cuda_release_cached_memory_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_synchronize), cw_cuda_synchronize_fn>);
static_assert(std::is_same_v<decltype(&cw_cuda_device_info), cw_cuda_device_info_fn>);
