#pragma once
// Loss pieces of the long-tail remedies (docs/protocols/longtail.md), each as per-sample terms whose sum is the batch loss.
#include <cstdint>
#include <vector>

#include "engine/tensor.h"

namespace cw::train {

// PyTorch weighted-CE convention: per_sample_i = w_{y_i}·CE(logits_i, y_i) / Σ_j w_{y_j} (sums to the weighted mean).
Tensor weighted_ce_terms(const Tensor& logits, const Tensor& labels, const std::vector<int32_t>& host_labels,
                         const std::vector<double>& class_weights);

// LDAM's logits s·z̃ with z̃_{i,y_i} = z_{i,y_i} − Δ_{y_i}, the other entries unchanged.
Tensor ldam_logits(const Tensor& logits, const std::vector<int32_t>& host_labels, const std::vector<double>& margins,
                   float scale);

// docs/protocols/longtail.md §4 (formula ours): μ_c = mean of the rows of class c (classes without a row skipped),
// R_cos = (1/|P|) Σ_{(c,d)∈P} max(0, cos(μ_c, μ_d)) over the ordered pairs of present classes, c ≠ d; a 0-d tensor,
// 0 when fewer than two classes are present. per_class (optional, resized to C): class c's mean of
// max(0, cos(μ_c, μ_d)) over the other present classes d, −1 for a class not in the batch.
Tensor cosine_regulariser(const Tensor& logits, const std::vector<int32_t>& host_labels, int num_classes,
                          std::vector<double>* per_class = nullptr);

// BAT's target-class regulariser (docs/protocols/bat.md, our reconstruction): R_u,i = KL(u ‖ q_i), q_i = softmax of
// logits_i restricted to the classes ≠ y_i, u uniform over those C − 1 classes. Per sample, not divided by B.
Tensor uniform_target_kl(const Tensor& logits, const std::vector<int32_t>& host_labels);

}  // namespace cw::train
