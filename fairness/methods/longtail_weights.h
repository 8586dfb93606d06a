#pragma once
// Per-class weights and margins of the long-tail remedies (docs/protocols/longtail.md), as pure functions of the previous
// epoch's class statistics. Every weight vector is normalised to Σ_k w_k = C.
#include <cstdint>
#include <vector>

namespace cw::train {

// w scaled so that Σ_k w_k = C; all-zero (or empty-sum) input gives uniform weights 1.
std::vector<double> normalise_to_classes(std::vector<double> w);

// §1 scenario 1: w_k ∝ (1 − r_k)^p, r_k = previous-epoch training robust accuracy of class k.
std::vector<double> cost_sensitive_weights(const std::vector<double>& robust_accuracy, double power);

// §1 scenario 2: w_{c*} = ω, the others 1, normalised.
std::vector<double> critical_class_weights(int num_classes, int critical, double omega);

// §2 (Cui et al.): w_k = (1 − β)/(1 − β^{n_k}), normalised. n_k = 0 counts as 1 (a class with no robustly-correct
// sample gets the largest weight instead of an infinite one).
std::vector<double> class_balanced_weights(const std::vector<int64_t>& counts, double beta);

// §3 (Cao et al.): Δ_k = c / n_k^{1/4}, c such that max_k Δ_k = max_margin; n_k = 0 counts as 1.
std::vector<double> ldam_margins(const std::vector<int64_t>& counts, double max_margin);

}  // namespace cw::train
