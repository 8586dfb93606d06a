#pragma once
// BAT — Balance Adversarial Training (Sun et al., AAAI 2023). RECONSTRUCTION (docs/protocols/bat.md): no code or full text
// was found, only the abstract; do not compare to published BAT numbers.
//   source-class fairness: x' from FAT-style early-stopped PGD (CE, CFA counter bookkeeping, train mode by default)
//     with a per-class budget τ_k = round(τ_max · t_k), t_k = previous-epoch training robust accuracy (τ_max before
//     any statistics), so classes that are hard to defend stop earlier, nearer the boundary;
//   target-class fairness: R_u,i = KL(u ‖ q_i) over the classes ≠ y_i at x';
//   loss (TRADES outer loss at that x', train mode, clean forward first):
//     per_sample_i = (s·CE(f(x_i), y_i) + s·β·KL(p(x_i) ‖ p(x'_i)) + μ·R_u,i) / B, s = 1 (original TRADES form) or
//     1/(1+β) (--trades-form cfa), β = --beta (default 6), μ = --bat-mu (default 1).
#include <string>
#include <vector>

#include "fairness/methods/classwise_early_stop.h"
#include "train/methods/method_options.h"

namespace cw::train {

class Bat : public Method {
public:
    explicit Bat(const MethodOptions& o);
    std::string name() const override { return "bat"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    void start_epoch(const EpochStart& start) override;
    EpochDecision end_epoch(const EpochEnd& end) override;

    std::vector<std::string> class_state_names() const override { return {"tau", "robust_acc"}; }
    std::vector<std::vector<double>> class_state() const override;
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    const std::vector<int>& tau() const { return tau_; }

private:
    void ensure_classes(int num_classes);
    std::vector<double> robust_accuracy() const;

    ClasswiseEarlyStopConfig attack_;
    float beta_, mu_;
    int tau_max_;
    TradesForm form_;
    // saved: the previous epoch's counts; tau_ follows from them
    bool have_stats_ = false;
    std::vector<int64_t> correct_, seen_;
    std::vector<int> tau_;
};

}  // namespace cw::train
