#pragma once
// The CUDA plugin's global modes (TF32, deterministic algorithms) set for one test scope and restored afterwards.
// CPU-vs-GPU comparisons of whole models or attacks need TF32 off: with it on, every GEMM and convolution rounds its
// inputs to 10 mantissa bits (relative error ~1e-3), far beyond the few ulps the comparisons assume.
#include <catch2/catch.hpp>

#include "engine/cuda/plugin_api.h"

namespace cw_test {

template <class Fn>
Fn plugin_fn(const char* name) {
    Fn f = cw::cuda_plugin_fn<Fn>(name);
    INFO("symbol " << name << " of libclasswise_cuda.so");
    REQUIRE(f != nullptr);
    return f;
}

// TF32 for one scope: Tf32Scope strict(false) makes GEMMs and convolutions full fp32.
class Tf32Scope {
public:
    explicit Tf32Scope(bool on)
        : set_(plugin_fn<cw_cuda_set_tf32_fn>("cw_cuda_set_tf32")),
          prev_(plugin_fn<cw_cuda_tf32_fn>("cw_cuda_tf32")()) {
        set_(on ? 1 : 0);
    }
    ~Tf32Scope() { set_(prev_); }

private:
    cw_cuda_set_tf32_fn set_;
    int prev_;
};

// Host-to-device copies staged through pinned buffers (on) or waiting for the queue (off) for one scope.
class StagedUploadsScope {
public:
    explicit StagedUploadsScope(bool on)
        : set_(plugin_fn<cw_cuda_set_staged_uploads_fn>("cw_cuda_set_staged_uploads")),
          prev_(plugin_fn<cw_cuda_staged_uploads_fn>("cw_cuda_staged_uploads")()) {
        set_(on ? 1 : 0);
    }
    ~StagedUploadsScope() { set_(prev_); }

private:
    cw_cuda_set_staged_uploads_fn set_;
    int prev_;
};

// cuDNN and our kernels restricted to deterministic algorithms for one scope.
class DeterministicScope {
public:
    DeterministicScope()
        : set_(plugin_fn<cw_cuda_set_deterministic_fn>("cw_cuda_set_deterministic")),
          prev_(plugin_fn<cw_cuda_deterministic_fn>("cw_cuda_deterministic")()) {
        set_(1);
    }
    ~DeterministicScope() { set_(prev_); }

private:
    cw_cuda_set_deterministic_fn set_;
    int prev_;
};

}  // namespace cw_test
