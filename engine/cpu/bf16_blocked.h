// Our plain NCHW fp32 activations into oneDNN's nChw16c bf16 layout (its `aBcd16b`): the conversion in front of
// every bf16 convolution's activation input. oneDNN 2.6 runs this reorder with its generic JIT kernel at about
// half the speed per byte of its fp32 blocked reorders (make bench's time split), so the bf16 path converts with
// this AVX-512 kernel instead. It rounds exactly as oneDNN's reorder does (VCVTNEPS2BF16: to nearest even, NaN
// kept quiet), so results are bit for bit those of the reorder it replaces. The same layout takes the incoming
// gradients of bf16 convolutions, gated by relu on the way (relu_gated_from_nchw) or scattered from a max-pool's
// (pooled_relu_gated_scatter).
#pragma once

#include <cstdint>

namespace cw::bf16_blocked {

// Whether the kernel can run: AVX512_BF16 (the bf16 path requires it anyway) and channels a multiple of 16 (the
// layout pads other counts, left to oneDNN).
bool supported(int64_t channels);

// x: [n, c, hw] fp32; y: [n, c / 16, hw, 16] bf16 (as uint16_t). Requires supported(c).
void from_nchw(const float* x, uint16_t* y, int64_t n, int64_t c, int64_t hw);

// The same conversion of relu's incoming gradient gy turned into relu's input gradient on the way: gy where relu's
// output y ([n, c, hw] fp32) is above 0 or NaN, else 0 (relu's gradient with NaN passing, as the relu op computes
// it from its input). With channel_sums (not null), each channel's sum of those gated fp32 values over the batch
// (a bias's gradient): each image's in float, pixel by pixel, the images added in double in order, so the result
// does not depend on the thread count. y null: gy is taken as it is (already gated), with the same sums. Requires
// supported(c).
void relu_gated_from_nchw(const float* gy, const float* y, uint16_t* out, int64_t n, int64_t c, int64_t hw,
                          float* channel_sums);

// The gradient conv2d_relu_maxpool's convolution receives, written straight into this layout: gy ([n, c, h/2, w/2],
// the pooled output's incoming gradient) gated by relu at the pooled output y (same shape) and placed where each
// window took its value (argmax, as the max-pool writes it: the index in the h x w plane), 0 elsewhere; h and w even.
// The same bits as the pool's scatter into NCHW fp32 (0 + value) followed by relu_gated_from_nchw with y null, and
// channel_sums (not null) the same sums: each channel's values are added in pixel order (a window's place in row 2i
// before any place in row 2i + 1), skipping only zeros, which leave a float sum unchanged. Requires supported(c).
void pooled_relu_gated_scatter(const float* gy, const float* y, const int32_t* argmax, uint16_t* out, int64_t n,
                               int64_t c, int64_t h, int64_t w, float* channel_sums);

}  // namespace cw::bf16_blocked
