#pragma once
// FAIR-TAT, Fair Targeted Adversarial Training (Medi, Jung, Keuper, WACV 2025; fairness.md §D.2), AT base:
// every training sample gets a target t_i ≠ y_i — uniform in epoch 0, later from π built from the previous epoch's
// training CFP (the targeted adversarial predictions vs ground truth; default π = softmax(2·CFP), the code's) —
// and a targeted PGD-K crafted in TRAIN mode from U(−ε_{y_i}, ε_{y_i}) descends CE(f(x+δ), t) inside ε_{y_i};
// the loss is mean CE(f(x_adv), y). ε_k = (λ + r_k)·ε with r_k the targeted training accuracy of class k
// (correct_k·C/N), from epoch `begin` = 1 on. Prior and ε scaling are independent switches (D.4 item 3).
#include <memory>

#include "attacks/pgd.h"
#include "train/methods/method_options.h"

namespace cw::train {

class FairTat : public Method {
public:
    explicit FairTat(const MethodOptions& o);
    std::string name() const override { return "fair_tat"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    EpochDecision end_epoch(const EpochEnd& end) override;
    CleanForward clean_forward_after_step() const override { return clean_forward_; }

    std::vector<std::string> class_state_names() const override { return {"eps", "cfp", "target_prob"}; }
    std::vector<std::vector<double>> class_state() const override;
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    // The targets the next batch would use for these labels (draws from `rng`).
    std::vector<int32_t> targets(const std::vector<int32_t>& labels, int64_t epoch, Rng& rng);
    const std::vector<float>& class_eps() const { return class_eps_; }
    const std::vector<double>& prior() const { return prior_; }

private:
    void ensure_classes(int num_classes);

    CfaOptions o_;
    float eps_;
    CleanForward clean_forward_;
    std::unique_ptr<attacks::Pgd> attack_;
    std::vector<float> class_eps_;
    std::vector<double> cfp_, prior_;
};

}  // namespace cw::train
