#pragma once
// FAIR-TAT, Fair Targeted Adversarial Training (Medi, Jung, Keuper, WACV 2025; docs/protocols/fair_tat.md §2), AT base:
// every training sample gets a target t_i ≠ y_i — uniform in epoch 0, later from π built from the previous epoch's
// training CFP (the targeted adversarial predictions vs ground truth; default π = softmax(2·CFP), the code's) —
// and a targeted PGD-K crafted in TRAIN mode from U(−ε_{y_i}, ε_{y_i}) descends CE(f(x+δ), t) inside ε_{y_i};
// the loss is mean CE(f(x_adv), y). ε_k = (λ + r_k)·ε with r_k the targeted training accuracy of class k
// (correct_k·C/N), from epoch `begin` = 1 on. Prior and ε scaling are independent switches (docs/protocols/fair_tat.md §4 item 3).
// fair_tat_trades (reconstruction, docs/protocols/fair_tat.md §4 item 4: the reference code never uses the target with TRADES): the same
// targets and ε_k, the targeted PGD crafted in EVAL mode from x + 0.001·N(0, I), then CFA-form TRADES on x'
// ((1−b)·CE(f(x), y) + b·KL(p(x) ‖ p(x')), b = β/(1+β), β = 6, no CCR).
// fair_tat_fat (reconstruction, docs/protocols/fair_tat.md §4 item 4: the code ignores the target with FAT too): the same targets and ε_k,
// an early-stopped targeted PGD with FAT's CFA bookkeeping (τ = 3, train mode, uniform start) where
// "misclassified" means ŷ ≠ y, then mean CE(f(x'), y).
#include <memory>

#include "attacks/attack.h"
#include "train/methods/method_options.h"
#include "train/methods/trades.h"

namespace cw::train {

class FairTat : public Method {
public:
    enum class Base { At, Trades, Fat };
    explicit FairTat(const MethodOptions& o, Base base = Base::At);
    std::string name() const override {
        return base_ == Base::Trades ? "fair_tat_trades" : base_ == Base::Fat ? "fair_tat_fat" : "fair_tat";
    }
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
    float eps_, beta_ = 6.f;
    Base base_;
    CleanForward clean_forward_;
    std::unique_ptr<attacks::Attack> attack_;   // targeted PGD, or the early-stopped one for the FAT base
    int steps_ = 10, tau_ = 3;
    float alpha_ = 2.f / 255;
    bool normal_start_ = false;
    std::unique_ptr<Trades> trades_;   // the TRADES base's outer loss; null for the AT base
    std::vector<float> class_eps_;
    std::vector<double> cfp_, prior_;
};

}  // namespace cw::train
