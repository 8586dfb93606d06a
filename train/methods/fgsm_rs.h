#pragma once
// FGSM-RS fast AT (Wong et al. 2020; docs/protocols/training.md §6): δ ~ U(−ε, ε), one sign step of α = 1.25·ε in train mode,
// per_sample_i = CE(f(x + δ_i), y_i) / B.
//
// Catastrophic-overfitting guard (off by default; Wong's --early-stop): the first training batch of every epoch
// is kept; at the end of the epoch PGD-S (S = 5, α = ε/4 = 2/255 at 8/255, one uniform start) attacks it with
// the model in EVAL mode (Wong's code leaves the model in train mode, which would also move the BN running
// statistics — we do not), and if its robust accuracy fell by more than `drop` (0.2) since the previous
// epoch's check, training stops and the weights saved at that previous check are restored.
#include <memory>

#include "attacks/attack.h"
#include "train/methods/method_options.h"

namespace cw::train {

class FgsmRs : public Method {
public:
    explicit FgsmRs(const MethodOptions& o);
    std::string name() const override { return "fgsm_rs"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    EpochDecision end_epoch(const EpochEnd& end) override;

    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    // The guard's last robust accuracy (−1 before the first check), for logs and tests.
    double last_check_accuracy() const { return have_check_ ? prev_acc_ : -1; }

private:
    MethodOptions o_;
    std::unique_ptr<attacks::Attack> attack_;       // FGSM-RS, or FGSM from x without random start
    std::unique_ptr<attacks::Attack> guard_attack_;  // PGD-S in eval mode
    // Guard state: the epoch's first batch, a random stream for the check (forked at that batch), and the
    // previous check's accuracy and model state.
    Tensor guard_images_, guard_labels_;
    Rng guard_rng_;
    bool have_check_ = false;
    double prev_acc_ = 0;
    std::vector<Tensor> prev_state_;
};

}  // namespace cw::train
