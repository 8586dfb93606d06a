#pragma once
// Batch norm's per-channel affine map y = x * scale + shift and the rule of the ReLU fused after it
// (batch_norm_relu), written once for the CPU and the CUDA kernels. The fused op's backward recomputes y from x to
// know where the forward clamped, so every product here rounds on its own: on the GPU through __fmul_rn /
// __fadd_rn (nvcc would otherwise fuse a product into the next add), on the host because the files that include
// this are built with -ffp-contract=off (the Makefile).
#include "engine/host_device.h"

namespace cw::bn {

CW_HD float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

CW_HD float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

struct ChannelAffine {
    float scale, shift;
};

// scale = gamma * invstd, shift = beta - mean * scale.
CW_HD ChannelAffine channel_affine(float mean, float invstd, float gamma, float beta) {
    const float scale = mul_rn(gamma, invstd);
    return {scale, beta - mul_rn(mean, scale)};
}

CW_HD float affine_at(const ChannelAffine& a, float x) { return add_rn(mul_rn(x, a.scale), a.shift); }

// ReLU's rule, as PyTorch's threshold: at or below 0 it clamps; a NaN passes, and so does its gradient.
CW_HD bool clamps(float y) { return y <= 0.f; }

CW_HD float relu_at(float y) { return clamps(y) ? 0.f : y; }

// The gradient reaching batch norm's output through the fused ReLU: g, or 0 where the forward clamped.
CW_HD float gated(float g, float x, const ChannelAffine& a) { return clamps(affine_at(a, x)) ? 0.f : g; }

}  // namespace cw::bn
