#pragma once
// Per-class mean logit vectors (docs/protocols/metrics.md, "cross-class cosine similarity"): μ_c = (1/N_c) Σ_{i: y_i = c} f(x_i).
// The evaluator keeps the sums, not the means, in its resumable state: a batch adds its rows, so a resumed run adds
// exactly what an uninterrupted one does, and the division by N_c happens once, when results.json is written.
// Layout of one evaluation's sums: sums[c·C + j] = Σ over samples of true class c of logit j.
#include <cstdint>
#include <vector>

namespace cw::eval {

// Adds each row of `logits` ([n, classes], row-major) to the row of its label.
void add_class_logits(std::vector<double>& sums, const std::vector<float>& logits, const std::vector<int32_t>& labels,
                      int64_t classes);

// μ_c = sums row c / counts[c]; a class without samples gets a row of NaN (it has no mean).
std::vector<std::vector<double>> class_mean_logits(const std::vector<double>& sums,
                                                   const std::vector<int64_t>& counts);

}  // namespace cw::eval
