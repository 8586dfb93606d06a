#pragma once
// The long-tail remedies of docs/protocols/longtail.md (sections below) transferred to adversarial training, on the
// PGD-AT base (train-mode PGD-K on CE from a uniform start, loss on f(x_adv) in train mode, clean train-mode forward
// after the step):
//   at_cost_sensitive  §1    w_k ∝ (1 − r_k)^p from the previous epoch's training robust accuracy r_k, or (with a
//                            critical class) w_{c*} = ω; loss Σ_i w_{y_i}·CE_i / Σ_i w_{y_i}
//   at_class_balanced  §2    w_k = (1 − β)/(1 − β^{n_k}), n_k = robustly-correct training samples last epoch
//   at_ldam_drw        §3    CE(s·(z − Δ_y e_y)) with Δ_k ∝ n_k^{−1/4}, uniform weights before the DRW epoch, CB after
//   at_cosine_reg      §4    mean CE + λ·R_cos over the batch's class means of the adversarial logits
//   at_target_class    §5    with probability p_t a sample's attack is targeted PGD toward c* (never when y = c*)
// Weights are normalised to Σ_k w_k = C; before any statistics (epoch 0) they are uniform and every n_k is equal.
#include <string>
#include <vector>

#include "attacks/pgd.h"
#include "train/methods/method_options.h"

namespace cw::train {

enum class LongTailKind { CostSensitive, ClassBalanced, LdamDrw, CosineReg, TargetClass };

class LongTailAt : public Method {
public:
    LongTailAt(LongTailKind kind, const MethodOptions& o);
    std::string name() const override;
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    void start_epoch(const EpochStart& start) override;
    EpochDecision end_epoch(const EpochEnd& end) override;
    CleanForward clean_forward_after_step() const override { return clean_forward_; }

    std::vector<std::string> class_state_names() const override;
    std::vector<std::vector<double>> class_state() const override;
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    const std::vector<double>& weights() const { return weights_; }
    const std::vector<double>& margins() const { return margins_; }
    int drw_epoch() const { return drw_epoch_; }

private:
    void ensure_classes(int num_classes);
    // weights_ and margins_ for 0-based epoch `epoch` from the previous epoch's counts (resume recomputes them, so
    // they are bit-identical to the uninterrupted run's).
    void refresh(int64_t epoch);
    Tensor adversarial(const BatchInput& in);

    LongTailKind kind_;
    LongTailOptions lt_;
    attacks::Pgd attack_;
    attacks::Pgd toward_critical_;
    CleanForward clean_forward_;
    int drw_epoch_;

    // Learned across epochs (saved): the previous epoch's statistics and what this epoch uses.
    bool have_stats_ = false;
    std::vector<int64_t> n_eff_;         // n_k: robustly-correct training samples of class k
    std::vector<int64_t> n_seen_;        // training samples of class k; r_k = n_k / seen_k
    int64_t refreshed_for_ = -1;         // the epoch weights_ / margins_ were computed for (-1: none)
    std::vector<double> weights_;        // w_k of this epoch
    std::vector<double> margins_;        // Δ_k of this epoch
    // This epoch's tallies (saved, so a resumed epoch continues): R_cos rows, targeted samples.
    std::vector<double> cos_sum_, cos_batches_;
    std::vector<double> targeted_, seen_;
};

}  // namespace cw::train
