#pragma once
// C exports of the CUDA plugin (libclasswise_cuda.so) beyond cw_cuda_create_backend: the switches, memory
// statistics and device information that the Backend interface does not carry. Functions that can
// fail return 0 on success, or -1 with a one-line reason in err. Pointers are device pointers of GPU 0.
//
// Host code (tests, benchmarks) reaches them with cw::cuda_plugin_fn<T>(name) once cuda_available() has loaded
// the plugin; this header needs no CUDA headers.
#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <string>

extern "C" {
// TF32 tensor cores for convolutions and GEMM (default on; env CLASSWISE_TF32=0 turns it off at start-up).
typedef void (*cw_cuda_set_tf32_fn)(int on);
typedef int (*cw_cuda_tf32_fn)(void);
// Deterministic mode (env CLASSWISE_DETERMINISTIC=1): only cuDNN algorithms reported deterministic, chosen by the
// heuristics (not by timing), so repeated runs are bit-identical. Reductions are always fixed-order.
typedef void (*cw_cuda_set_deterministic_fn)(int on);
typedef int (*cw_cuda_deterministic_fn)(void);
// cuDNN algorithm choice by timing (cudnnFind*Ex, default) or by the heuristics (env CLASSWISE_CUDNN_BENCHMARK=0).
typedef void (*cw_cuda_set_cudnn_benchmark_fn)(int on);
// Host-to-device copies staged through pinned buffers, so the host does not wait for the queue (default on; env
// CLASSWISE_STAGED_UPLOADS=0 makes every such copy wait, as before).
typedef void (*cw_cuda_set_staged_uploads_fn)(int on);
typedef int (*cw_cuda_staged_uploads_fn)(void);
// Caching allocator statistics in bytes: held by tensors, cached for reuse, and the peaks of both since start-up
// or the last reset.
typedef void (*cw_cuda_memory_stats_fn)(int64_t* in_use, int64_t* cached, int64_t* peak_in_use,
                                        int64_t* peak_reserved);
typedef void (*cw_cuda_reset_peak_memory_fn)(void);
typedef int (*cw_cuda_release_cached_memory_fn)(char* err, unsigned long err_len);
// Waits for every kernel queued so far (timings).
typedef int (*cw_cuda_synchronize_fn)(char* err, unsigned long err_len);
// "NVIDIA H100 80GB HBM3, compute capability 9.0, 132 SMs, 79.1 GiB"
typedef int (*cw_cuda_device_info_fn)(char* buf, unsigned long len);
}

namespace cw {

// The address of an export of the already loaded CUDA plugin, or null when it is not loaded (no GPU, or
// cuda_available() not called yet) or lacks the symbol. The plugin is found among the loaded objects by its file
// name, so this works whichever candidate path engine/cuda_plugin.cpp loaded it from.
inline void* cuda_plugin_symbol(const char* name) {
    std::string path;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            static const char kName[] = "libclasswise_cuda.so";
            const char* p = info->dlpi_name ? info->dlpi_name : "";
            const size_t n = std::strlen(p), t = sizeof kName - 1;
            if (n < t || std::strcmp(p + n - t, kName) != 0) return 0;
            *static_cast<std::string*>(data) = p;
            return 1;
        },
        &path);
    if (path.empty()) return nullptr;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);  // a new reference to the loaded plugin only
    if (!handle) return nullptr;
    void* sym = dlsym(handle, name);
    dlclose(handle);  // drops that reference; the plugin itself stays loaded
    return sym;
}

template <class Fn>
Fn cuda_plugin_fn(const char* name) {
    return reinterpret_cast<Fn>(cuda_plugin_symbol(name));
}

}  // namespace cw
