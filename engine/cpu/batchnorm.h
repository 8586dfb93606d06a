// Batch norm's CPU passes (engine/cpu/batchnorm.cpp; the kernels are CpuBackend's batchnorm_* members) are compiled
// twice: for AVX-512, which runs where the CPU has it, and for plain x86-64. Both give the same bits.
#pragma once

namespace cw::batchnorm_cpu {

// Whether the AVX-512 copy runs now.
bool wide();

// While alive, the plain x86-64 copy runs even on a CPU with AVX-512, so the tests can hold both to one reference.
// Not for use while batch norm runs on another thread.
class PortableOnly {
public:
    PortableOnly();
    ~PortableOnly();
    PortableOnly(const PortableOnly&) = delete;
    PortableOnly& operator=(const PortableOnly&) = delete;

private:
    bool previous_;
};

}  // namespace cw::batchnorm_cpu
