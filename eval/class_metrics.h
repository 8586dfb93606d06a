#pragma once
// Class-wise metrics (docs/protocols/metrics.md), all computed from per-sample records (label y_i, prediction ŷ_i) through
// the C×C confusion matrix M[k][j] = #{i : y_i = k, ŷ_i = j} (rows = truth). The same functions serve clean
// predictions and predictions under an attack.
//
// A class without samples has no accuracy: its per-class accuracy is NaN (null in JSON) and it is left out of
// worst / best class, spread and SD.
#include <cstdint>
#include <vector>

namespace cw::fairness {

using Confusion = std::vector<std::vector<int64_t>>;

Confusion confusion_matrix(const std::vector<int32_t>& labels, const std::vector<int32_t>& preds,
                           int64_t num_classes);

struct ClassMetrics {
    int64_t num_classes = 0, num_samples = 0;
    Confusion confusion;
    std::vector<int64_t> class_counts;          // N_k
    double accuracy = 0;                        // Σ_k M[k][k] / N (the sample average)
    std::vector<double> per_class_accuracy;     // recall M[k][k] / N_k (NaN if N_k = 0)
    int worst_class = -1, best_class = -1;      // argmin / argmax of the per-class accuracy (lowest index on ties)
    double worst10_accuracy = 0;                // mean of the lowest max(1, ⌊C/10⌋) per-class accuracies (FAIR-TAT's
                                                // CIFAR-100 "worst class")
    double spread = 0;                          // max_k − min_k accuracy
    double sd = 0, nsd = 0;                     // population SD of per-class accuracy, and SD / class mean
    double error_sd = 0, error_nsd = 0;         // the same on per-class errors 1 − A(k)
    std::vector<double> cfp;                    // FP_k / Σ_j FP_j (all 0 when nothing is misclassified)
    std::vector<double> cfn;                    // #{y = k, ŷ ≠ k} / #misclassified (FAIR-TAT code, optional)
    std::vector<double> one_vs_rest_accuracy;   // FAIR-TAT eq. 7 literal: (TP_k + TN_k) / N
};

ClassMetrics class_metrics(const std::vector<int32_t>& labels, const std::vector<int32_t>& preds,
                           int64_t num_classes);
ClassMetrics class_metrics(const Confusion& confusion);

// Per-class boundary error, FRL code definition: A_nat(k) − A_rob(k).
std::vector<double> boundary_error(const ClassMetrics& clean, const ClassMetrics& robust);
// Exact variant: #{y = k, ŷ = k, ŷ' ≠ k} / N_k (differs only where a clean-wrong sample is adversarially right).
std::vector<double> boundary_error_exact(const std::vector<int32_t>& labels, const std::vector<int32_t>& clean_pred,
                                         const std::vector<int32_t>& adv_pred, int64_t num_classes);

}  // namespace cw::fairness
