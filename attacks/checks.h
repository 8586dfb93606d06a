#pragma once
// AutoAttack's sanity checks on returned points (docs/protocols/attacks.md §8): no NaNs, inside [0,1], inside the ε-ball
// (+1e-6 slack for float rounding), and a deterministic model.
#include <string>
#include <vector>

#include "attacks/attack.h"

namespace cw::attacks {

// Empty if x_adv passes; otherwise one line naming the first offending sample and what is wrong.
std::string check_adversarial(const Images& x, const Images& x_adv, const std::vector<float>& eps, Norm norm,
                              float slack = 1e-6f);
// Two forward passes of the same batch (model already in the mode to check) give identical logits?
bool model_is_deterministic(nn::Module& model, const Tensor& x);

}  // namespace cw::attacks
