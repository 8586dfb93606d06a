// Our plain NCHW fp32 activations into oneDNN's nChw16c bf16 layout (its `aBcd16b`): the conversion in front of
// every bf16 convolution's activation input. oneDNN 2.6 runs this reorder with its generic JIT kernel at about
// half the speed per byte of its fp32 blocked reorders (make bench's time split), so the bf16 path converts with
// this AVX-512 kernel instead. It rounds exactly as oneDNN's reorder does (VCVTNEPS2BF16: to nearest even, NaN
// kept quiet), so results are bit for bit those of the reorder it replaces.
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

}  // namespace cw::bf16_blocked
