// oneDNN's fp32 convolution output (its nChw16c layout, `aBcd16b`) into our NCHW, with the layer's bias added and
// relu applied on the way: the conv2d_relu op's forward (engine/ops/conv.cpp), which otherwise runs oneDNN's output
// reorder and then a bias pass and a relu pass over the whole output. The arithmetic is theirs: each value plus its
// channel's bias in fp32, then relu as the relu op computes it (v <= 0 ? 0 : v, so NaN passes), so the result equals
// the three passes bit for bit. to_nchw_maxpool also takes each 2x2 window's maximum on the way (conv2d_relu_maxpool),
// so the full-size output is never written.
#pragma once

#include <cstdint>

namespace cw::blocked_bias_relu {

// Whether the kernel can run: AVX-512 (F) and channels a multiple of 16.
bool supported(int64_t channels);

// blocked: [n, c / 16, hw, 16] fp32; bias: [c] or null; y: [n, c, hw] fp32. Requires supported(c).
// With bf16_copy (only on CPUs with AVX512_BF16), y is also written there in nChw16c bf16, [n, c / 16, hw, 16],
// rounded by VCVTNEPS2BF16 as bf16_blocked::from_nchw rounds it: the same bits, without reading y back.
void to_nchw(const float* blocked, const float* bias, float* y, int64_t n, int64_t c, int64_t hw,
             uint16_t* bf16_copy = nullptr);

// blocked -> y as it is, no bias, no relu: every bit (-0, NaN payloads) as oneDNN's reorder gives it, faster (an
// output of 16 MB or more is written with non-temporal stores). Requires supported(c).
void to_nchw_plain(const float* blocked, float* y, int64_t n, int64_t c, int64_t hw);

// The same values max-pooled over 2x2 windows at stride 2: blocked [n, c / 16, h, w, 16] with h and w even; y and
// argmax [n, c, h / 2, w / 2]. Each window's maximum and its place as the max-pool op takes them
// (engine/cpu/maxpool2x2.h: the window's four values in row order, a later one taken where it is greater or NaN;
// argmax the index in its h x w plane), so the result equals to_nchw followed by the pool bit for bit.
void to_nchw_maxpool(const float* blocked, const float* bias, float* y, int32_t* argmax, int64_t n, int64_t c,
                     int64_t h, int64_t w, uint16_t* bf16_copy = nullptr);

}  // namespace cw::blocked_bias_relu
