// The data gradient of a stride-1 convolution whose input has few channels: the image gradient of a network's first
// layer, which every attack step computes (1 channel for MNIST and Fashion-MNIST, 3 for colour images). oneDNN runs
// it as a convolution with one to three output channels, at a fifth of its usual rate (the small CNN's 1 -> 32
// layer: 2.6 ms of data gradient against 0.4 ms forward on two Zen 5 cores, about a tenth of a PGD-10 training
// step). Computed directly instead: each input row of 32 columns sits in two AVX-512 registers while the filters'
// taps add their shifted output-gradient rows into it.
#pragma once

#include "engine/backend.h"
#include "engine/cpu/onednn_conv.h"

namespace cw::thin_conv_data {

// Whether the direct kernel takes this geometry on this CPU: AVX-512 (F, BW, VL), stride 1, at most 4 input channels and a
// filter at most 16 wide, an input at most 128 columns wide. Elsewhere the convolution's own path computes the gradient.
bool applies(const ConvGeometry& g);

// gx = the gradient of the convolution's input for output gradient gy and filters w (NCHW, KCRS, fp32), in the
// convolutions' precision: fp32, or bf16 (gy and w rounded to bf16, sums in fp32; only where the CPU has
// AVX512_BF16, which the bf16 policy guarantees, engine/cpu/precision_scope.h). Each input plane is one thread's,
// summed in a fixed order (fp32: filter k, then row r, then column s; bf16: filter pair, r, s, then the pair's two
// filters, thin_conv_data.cpp), so the result does not depend on the thread count.
// With relu_output (the output y of a relu that gy is the incoming gradient of: the conv2d_relu op), the gradient
// taken is relu's composed with the convolution's: gy where y is above 0 or NaN, else 0, gated as each plane is
// copied (no pass of its own).
void backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g, onednn_conv::Precision p,
                   const float* relu_output = nullptr);

}  // namespace cw::thin_conv_data
