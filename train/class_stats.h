#pragma once
// Per-class training statistics of one epoch, from the logits each method trained on (adversarial logits for the
// AT methods, before the step): what CFA's t_k (training robust accuracy of class k) and FAIR-TAT's CFP scores are
// computed from (docs/protocols/cfa.md, docs/protocols/fair_tat.md). Counts are kept as integers so a resumed epoch continues exactly.
#include <cstdint>
#include <vector>

namespace cw::train {

struct ClassStats {
    explicit ClassStats(int num_classes = 0);

    std::vector<int64_t> seen;       // samples of class k
    std::vector<int64_t> correct;    // argmax = y = k
    std::vector<int64_t> predicted;  // false positives: argmax = k ≠ y
    std::vector<double> loss_sum;    // Σ of the per-sample loss terms of class k (BatchLoss::per_sample)

    int num_classes() const { return static_cast<int>(seen.size()); }
    void add(const std::vector<int32_t>& labels, const std::vector<int32_t>& predictions,
             const std::vector<float>& per_sample_loss);
    void clear();

    int64_t total_seen() const;
    int64_t total_correct() const;
    int64_t total_wrong() const { return total_seen() - total_correct(); }
    // correct_k / seen_k (0 for a class not seen).
    std::vector<double> accuracy() const;
    // CFA's code form: correct_k · C / N_epoch (equals accuracy() on balanced data).
    std::vector<double> accuracy_times_classes_over_n() const;
    // FAIR-TAT CFP_k = FP_k / #wrong (all 0 when nothing is wrong).
    std::vector<double> cfp() const;
};

}  // namespace cw::train
