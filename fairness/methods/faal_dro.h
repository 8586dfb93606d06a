#pragma once
// FAAL's class-wise distributionally adversarial weights (Zhang et al., CVPR 2024; docs/protocols/faal.md §2), as
// pure functions of one batch. The inner maximisation over the class distribution that the authors' code hands to a
// convex-optimisation package, solved here exactly:
//
//   p* = argmax_{p ∈ Δ_K} Σ_k c_k p_k   subject to   KL(u ‖ p) = (1/K) Σ_k log(1 / (K p_k)) ≤ r,   u = uniform.
//
// The KKT conditions give p_k ∝ 1/(μ − c_k) for one scalar μ > max_k c_k (the problem's one-dimensional dual), and
// with s = 1/(μ − max c), δ_k = (max c − c_k)/(max c − min c) ∈ [0, 1]:
//   p_k(s) = (1/(1 + s·δ_k)) / Σ_j 1/(1 + s·δ_j),
//   KL(u ‖ p(s)) = log(mean_k 1/(1 + s·δ_k)) + mean_k log(1 + s·δ_k),
// which rises strictly from 0 (s = 0, the uniform) to ∞ (s → ∞, all mass on the largest c_k): the radius is met
// with equality at exactly one s, found by bisection.
#include <cstdint>
#include <vector>

namespace cw::train {

// p* above. radius 0, K = 1, or all c_k equal: the uniform (every feasible p is optimal when the c_k are equal; the
// uniform is the centre of the set). Throws std::invalid_argument on an empty or non-finite c or a radius that is
// negative or not finite. Radii too large for s to stay finite in double precision return the limit: p split
// evenly over the classes with the largest c_k (the others below 1e-300).
std::vector<double> faal_dro_weights(const std::vector<double>& c, double radius);

// KL(u ‖ p) = (1/K) Σ_k log(1/(K p_k)); +∞ when some p_k is 0.
double faal_reverse_kl(const std::vector<double>& p);

// The per-class adversarial loss the weights are solved on (the authors' code): the mean over the batch's class-k
// samples of max_{j ≠ y} softmax_j − softmax_y, from `probs` ([B, K] row-major softmax of the logits trained on);
// a class absent from the batch gets −1 (the code's replacement of the empty mean). counts[k]: the class's samples.
std::vector<double> faal_class_margins(const std::vector<float>& probs, const std::vector<int32_t>& labels, int classes,
                                       std::vector<int64_t>& counts);

}  // namespace cw::train
