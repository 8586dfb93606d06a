#pragma once
// The rules DAFA and TRIX share (docs/protocols/dafa.md §2, trix.md §2), as pure functions over host vectors:
//   class similarity  P[i][j] = mean over the samples of class i of their predicted probability of class j
//   DAFA weights      W_i = 1 + λ·Σ_{j≠i} ( p_i(j)·p_j(j)  if p_i(i) < p_j(j)      — i is the harder class: it gains
//                                          −p_j(i)·p_i(i)  otherwise (code; ties)   — i is the easier: it gives )
//   TRIX split        sample n is attacked targeted iff W^batch_{y_n} < (1/B)·Σ_m W^batch_{y_m}
#include <cstdint>
#include <vector>

#include "train/methods/dafa_options.h"

namespace cw::train {

// Row-major C×C: row i = prob_sums row i / counts[i]; a class never seen keeps a zero row. prob_sums is C×C
// (Σ over the samples of class i of their probability vector).
std::vector<double> class_similarity(const std::vector<double>& prob_sums, const std::vector<int64_t>& counts);

// DAFA's W from a C×C similarity (DAFA_comp, the paper's Algorithm 2; the code's tie rule by default).
std::vector<double> dafa_weights(const std::vector<double>& similarity, int num_classes, double lambda,
                                 DafaTies ties = DafaTies::Code);

// Adds every sample's probability row to its class's row of prob_sums (C×C) and counts it. probs: B×C row-major.
void accumulate_class_probs(const std::vector<float>& probs, const std::vector<int32_t>& labels, int num_classes,
                            std::vector<double>& prob_sums, std::vector<int64_t>& counts);

// TRIX's per-batch weights (its calculate_class_weights_from_clean): the similarity of the batch's clean
// probabilities, 1e-8 added to the diagonal, then DAFA's rule with the code's ties.
std::vector<double> trix_batch_weights(const std::vector<float>& probs, const std::vector<int32_t>& labels,
                                       int num_classes, double lambda);

// TRIX's split: 1 = targeted (a strong class: its batch weight is below the batch's mean sample weight).
std::vector<uint8_t> trix_targeted(const std::vector<double>& batch_weights, const std::vector<int32_t>& labels);

}  // namespace cw::train
