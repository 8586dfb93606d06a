#pragma once
// The CUDA plugin's global switches (TF32, staged uploads, deterministic algorithms) set for one test scope and restored.
// CPU-vs-GPU comparisons of whole models or attacks need TF32 off: with it on, every GEMM and convolution rounds its
// inputs to 10 mantissa bits (relative error ~1e-3), far beyond the few ulps the comparisons assume.
#include <catch2/catch.hpp>

#include <string>

#include "engine/cuda/plugin_api.h"

namespace cw_test {

template <class Fn>
Fn plugin_fn(const char* name) {
    Fn f = cw::cuda_plugin_fn<Fn>(name);
    INFO("symbol " << name << " of libclasswise_cuda.so");
    REQUIRE(f != nullptr);
    return f;
}

// A switch of the plugin (exports cw_cuda_set_<name> and cw_cuda_<name>) set for one scope, restored afterwards.
class PluginSwitchScope {
public:
    PluginSwitchScope(const std::string& name, bool on)
        : set_(plugin_fn<cw_cuda_set_tf32_fn>(("cw_cuda_set_" + name).c_str())),
          prev_(plugin_fn<cw_cuda_tf32_fn>(("cw_cuda_" + name).c_str())()) {
        set_(on ? 1 : 0);
    }
    ~PluginSwitchScope() { set_(prev_); }
    PluginSwitchScope(const PluginSwitchScope&) = delete;
    PluginSwitchScope& operator=(const PluginSwitchScope&) = delete;

private:
    cw_cuda_set_tf32_fn set_;   // every switch has this setter's and getter's types (checked in plugin_entry.cu)
    int prev_;
};

// TF32 for one scope: Tf32Scope strict(false) makes GEMMs and convolutions full fp32.
struct Tf32Scope : PluginSwitchScope {
    explicit Tf32Scope(bool on) : PluginSwitchScope("tf32", on) {}
};
// Host-to-device copies staged through pinned buffers (on) or waiting for the queue (off).
struct StagedUploadsScope : PluginSwitchScope {
    explicit StagedUploadsScope(bool on) : PluginSwitchScope("staged_uploads", on) {}
};
// cuDNN and our kernels restricted to deterministic algorithms.
struct DeterministicScope : PluginSwitchScope {
    DeterministicScope() : PluginSwitchScope("deterministic", true) {}
};

}  // namespace cw_test
