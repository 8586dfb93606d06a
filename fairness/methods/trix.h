#pragma once
// TRIX, mixed targeted / untargeted adversarial training (Medi, Jung, Keuper, arXiv 2507.07768;
// docs/protocols/trix.md), on DAFA's TRADES (its code is DAFA's with one more loss, mixed_trades_loss):
//   every batch, model in EVAL mode: the clean probabilities give per-batch DAFA weights (λ = 1, 1e-8 on the
//     similarity's diagonal; any λ > 0 gives the same split, so there is none to set); a sample whose class weight is below the batch's mean sample weight belongs to a
//     strong class and is attacked TARGETED toward t_n ~ Uniform({0..C−1} \ {y_n}) (sign steps descending
//     CE(f(x'), t_n)); the others UNTARGETED (sign steps ascending KL(p(x) ‖ p(x')), TRADES' inner problem);
//     from x + 0.001·N(0,I), K steps of α_n inside ε_n;
//   ε_n, α_n and the loss weight come from DAFA's warm-up schedule exactly as in DAFA (all 1 before epoch τ);
//   loss: W_{y}·CE(f(x), y)/B + β·KL(p(x) ‖ p(x'))/B in train mode, x' forwarded before x (the code's order).
#include "fairness/methods/dafa_schedule.h"
#include "train/methods/method_options.h"

namespace cw::train {

class Trix : public Method {
public:
    explicit Trix(const MethodOptions& o);
    std::string name() const override { return "trix"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    void start_epoch(const EpochStart& start) override;
    EpochDecision end_epoch(const EpochEnd& end) override;

    // weight, eps, self_prob as DAFA; targeted: the share of class k's samples attacked targeted this epoch.
    std::vector<std::string> class_state_names() const override { return {"weight", "eps", "self_prob", "targeted"}; }
    std::vector<std::vector<double>> class_state() const override;
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    DafaSchedule& schedule() { return schedule_; }

    // The mixed inner maximisation from `start`, with the targets already drawn (targets[n] = −1: untargeted).
    // Runs in eval mode and restores the model's mode. Public so that tests can replay it.
    Tensor adversarial(nn::Module& model, const Tensor& x, const Tensor& start, const std::vector<int32_t>& targets,
                       const std::vector<int32_t>& host_labels) const;
    // Which samples are targeted, and toward which class (−1: untargeted): the batch split from the clean
    // eval-mode probabilities, then one uniform draw from `rng` per targeted sample, in batch order.
    std::vector<int32_t> targets(nn::Module& model, const Tensor& x, const std::vector<int32_t>& host_labels,
                                 int num_classes, Rng& rng) const;

private:
    void ensure_classes(int num_classes);

    float eps_, alpha_, beta_;
    int steps_;
    bool mixed_;
    DafaSchedule schedule_;
    std::vector<int64_t> seen_, targeted_;   // this epoch, per class (saved: a resumed epoch continues them)
};

}  // namespace cw::train
