// Winograd F(2x2, 3x3) for 3x3 stride-1 convolutions on the CPU: forward, backward-data and backward-filter.
#pragma once

#include "engine/backend.h"

namespace cw::winograd {

// Whether the geometry suits the transform (3x3, stride 1, padding <= 2, enough channels to repay it).
bool applicable(const ConvGeometry& g);

void forward(const float* x, const float* w, float* y, const ConvGeometry& g);
void backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g);
// gw (+)= the filter gradient.
void backward_filter(const float* x, const float* gy, float* gw, const ConvGeometry& g, bool accumulate);

}  // namespace cw::winograd
