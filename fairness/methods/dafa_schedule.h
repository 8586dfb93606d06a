#pragma once
// DAFA's warm-up switch and class weights, the state DAFA and TRIX share (docs/protocols/dafa.md §2-§3):
//   epochs 0 .. τ−2 (0-based): W_k = 1, nothing recorded;
//   epoch τ−1, the last warm-up epoch: every trained sample's softmax of the logits trained on (the adversarial
//     ones, train mode, before the step — the code's memory_dict) is summed per class;
//   at its end: P = class_similarity(sums), W = dafa_weights(P, λ); from epoch τ on: loss weight W_{y} on the
//     clean CE, radius ε_y = max(W_y, 0)·ε and step α_y = max(W_y, 0)·α.
// The weights are computed once and never again (code). Everything is saved for resume, the running sums of a
// half-done warm-up epoch too (17 significant digits, so a resumed run continues bit for bit).
#include <cstdint>
#include <string>
#include <vector>

#include "train/methods/dafa_options.h"
#include "nn/checkpoint.h"

namespace cw::train {

class DafaSchedule {
public:
    DafaSchedule(const DafaOptions& o, const std::string& owner);

    void ensure_classes(int num_classes);
    int num_classes() const { return static_cast<int>(weights_.size()); }
    bool recording(int64_t epoch) const { return epoch == warmup_ - 1; }
    bool active() const { return computed_; }

    // Sums the samples' probability rows (B×C, from the logits trained on) when `epoch` is the last warm-up epoch.
    void record(int64_t epoch, const std::vector<float>& probs, const std::vector<int32_t>& labels);
    // After epoch `epoch`: at the end of the last warm-up epoch, the similarity and the weights.
    void end_epoch(int64_t epoch);

    const std::vector<double>& weights() const { return weights_; }
    const std::vector<double>& similarity() const { return similarity_; }   // C×C, zeros until computed
    std::vector<double> self_probability() const;                          // P[k][k]
    // Per-class multipliers of ε and α: max(W_k, 0) (a negative W would turn the ball inside out).
    std::vector<float> radius_scale() const;
    // Per-sample W_{y_n} (the loss weight) and max(W_{y_n}, 0) (the radius / step scale).
    std::vector<float> sample_weights(const std::vector<int32_t>& labels) const;
    std::vector<float> sample_radius_scale(const std::vector<int32_t>& labels) const;

    int warmup() const { return warmup_; }
    double lambda() const { return lambda_; }
    DafaTies ties() const { return ties_; }

    void save(nn::Metadata& meta) const;
    void load(const nn::Metadata& meta);

private:
    std::string owner_;
    int warmup_;
    double lambda_;
    DafaTies ties_;
    bool computed_ = false;
    std::vector<double> weights_, similarity_, prob_sums_;
    std::vector<int64_t> counts_;
};

}  // namespace cw::train
