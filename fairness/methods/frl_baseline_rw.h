#pragma once
// FRL's "Baseline Reweight" (docs/protocols/frl.md §4) — a RECONSTRUCTION, no code exists: PGD-AT fine-tuning with one
// multiplier vector updated at the start of every epoch on validation robust-error violations
//   γ_rob(i) = e_rob(i) − E_rob − τ,  λ ← Norm(λ + r1·γ_rob)  (r1 halved as FRL's),  w(i) = 1/C + λ(i) − mean(λ)
// and per_sample_b = w(y_b)·CE(f(x_adv_b), y_b) / Σ_b w(y_b), x_adv from PGD-AT's attack (train mode, uniform start).
#include "attacks/pgd.h"
#include "train/methods/method_options.h"

namespace cw::train {

class FrlBaselineReweight : public Method {
public:
    explicit FrlBaselineReweight(const MethodOptions& o);
    std::string name() const override { return "frl_baseline_rw"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    void start_epoch(const EpochStart& start) override;
    CleanForward clean_forward_after_step() const override { return clean_forward_; }

    std::vector<std::string> class_state_names() const override { return {"lambda_rob", "weight", "violation_rob"}; }
    std::vector<std::vector<double>> class_state() const override { return {lambda_, weight_, violation_}; }
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    // The epoch-start update from given per-class and overall robust accuracies.
    void update(int64_t epoch, const std::vector<double>& acc_rob, double overall_rob);
    const std::vector<double>& weight() const { return weight_; }

private:
    void ensure_classes(int c);

    MethodOptions o_;
    attacks::Pgd train_attack_, val_attack_;
    CleanForward clean_forward_;
    int classes_ = 0;
    std::vector<double> lambda_, weight_, violation_;
};

}  // namespace cw::train
