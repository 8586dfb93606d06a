// oneDNN's fp32 convolution output (its nChw16c layout, `aBcd16b`) into our NCHW, with the layer's bias added and
// relu applied on the way: the conv2d_relu op's forward (engine/ops/conv.cpp), which otherwise runs oneDNN's output
// reorder and then a bias pass and a relu pass over the whole output. The arithmetic is theirs: each value plus its
// channel's bias in fp32, then relu as the relu op computes it (v <= 0 ? 0 : v, so NaN passes), so the result equals
// the three passes bit for bit.
#pragma once

#include <cstdint>

namespace cw::blocked_bias_relu {

// Whether the kernel can run: AVX-512 (F) and channels a multiple of 16.
bool supported(int64_t channels);

// blocked: [n, c / 16, hw, 16] fp32; bias: [c] or null; y: [n, c, hw] fp32. Requires supported(c).
void to_nchw(const float* blocked, const float* bias, float* y, int64_t n, int64_t c, int64_t hw);

}  // namespace cw::blocked_bias_relu
