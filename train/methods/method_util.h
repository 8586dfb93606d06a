#pragma once
// Pieces the baseline methods share: the 1/B-scaled per-sample CE, the sign-ascent inner loop that TRADES and
// MART run from their unclipped x + 0.001·N(0, I) start, and the one-line text of a radius.
#include <functional>
#include <string>
#include <vector>

#include "engine/rng.h"
#include "engine/tensor.h"
#include "nn/module.h"

namespace cw::train {

// CE(logits_i, y_i) / B for every sample: the per-sample terms whose sum is the mean CE.
Tensor per_sample_mean_ce(const Tensor& logits, const Tensor& labels);

// d(objective)/dx at x (x has no history); the caller decides the model mode and the objective.
using InputGradient = std::function<Tensor(const Tensor& x)>;

// K steps x ← Π_{ε_i-ball(x_nat)} ∩ [0,1] (x + α·sign(g(x))) from `start` (which may lie outside the box: TRADES
// and MART do not clip their noisy start). eps: ε_i per sample. Returns the last iterate, without history.
Tensor sign_ascent(const Tensor& x_nat, const Tensor& start, const std::vector<float>& eps, float alpha, int steps,
                   const InputGradient& grad);
// The same with a step α_i per sample (DAFA and TRIX scale the step with the class weight, as the radius).
Tensor sign_ascent(const Tensor& x_nat, const Tensor& start, const std::vector<float>& eps,
                   const std::vector<float>& alpha, int steps, const InputGradient& grad);

// x + σ·N(0, I), not clipped (TRADES / MART); drawn on the host in sample-major order (attacks/steps.h).
Tensor noisy_start(const Tensor& x, float sigma, Rng& rng);

// "8/255 (0.03137)": a radius or step in both forms.
std::string over_255(float v);

// v_i = per_class[y_i] when per_class is given, else v for every sample (class-wise ε, β).
std::vector<float> per_sample_values(float v, const std::vector<float>& per_class, const std::vector<int32_t>& labels);

// The clean tensors of model.state(), in that order (FGSM-RS's restore point).
std::vector<Tensor> clone_state(nn::Module& model);

}  // namespace cw::train
