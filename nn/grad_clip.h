#pragma once
// Gradient-norm clipping with torch.nn.utils.clip_grad_norm_ semantics: the L2 norm is taken over all
// gradients together; if it exceeds max_norm every gradient is scaled by max_norm / (norm + 1e-6).
// Parameters without a gradient are skipped.
#include <vector>

#include "engine/tensor.h"

namespace cw::nn {

// Returns the total norm before clipping.
double clip_grad_norm(const std::vector<Tensor*>& params, double max_norm);

// The total L2 norm of the gradients, without changing them (logging).
double grad_norm(const std::vector<Tensor*>& params);

}  // namespace cw::nn
