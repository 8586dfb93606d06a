#pragma once
// FAIR-TAT's target classes (docs/protocols/fair_tat.md §2, §4): a prior π over classes built from the previous epoch's class
// false-positive scores, and per-sample draws from π conditioned on "not the true class".
#include <cstdint>
#include <vector>

#include "engine/rng.h"
#include "train/methods/cfa_options.h"

namespace cw::train {

// Softmax: π_k = exp(scale·CFP_k) / Σ_j exp(scale·CFP_j) (code, scale 2).
// Proportional: π_k ∝ max(CFP_k, floor) (paper wording; the floor keeps every class drawable).
std::vector<double> target_prior(const std::vector<double>& cfp, TargetPrior kind, double scale, double floor);

// t ~ Categorical(π) conditioned on t ≠ label: π_label zeroed and the rest renormalised (the code's "resample
// until ≠ y" has the same law). Falls back to uniform over the other classes if they all have weight 0.
int32_t draw_target(const std::vector<double>& prior, int32_t label, Rng& rng);

// t ~ Uniform({0..C−1} \ {label}) (epoch 0, and the random-target ablation).
int32_t draw_uniform_target(int num_classes, int32_t label, Rng& rng);

}  // namespace cw::train
