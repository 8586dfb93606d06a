#pragma once
// CFA, Class-wise Calibrated Fair Adversarial Training (Wei et al. CVPR 2023; docs/protocols/cfa.md), wrapping a base:
//   cfa_at:     PGD-AT crafted in TRAIN mode from U(−ε_{y_i}, ε_{y_i}), loss mean CE(f(x_adv), y) (CFA's AT)
//   cfa_trades: TRADES in the CFA form ((1−b_i)·CE + b_i·KL, b_i = β_{y_i}/(1+β_{y_i})), eval-mode inner KL ascent
//   cfa_fat:    FAT with CFA semantics (train mode, ω = 0, τ = 3)
// t_k = training robust accuracy of class k in the epoch (CFA code form: correct_k·C/N, from the logits trained
// on). For every epoch e ≥ begin the class-wise values come from epoch e−1:
//   CCM: ε_k = (λ1 + t_k)·ε        (λ1: paper 0.5 AT / 0.3 TRADES / 0.7 FAT; the CFA code uses 0.5 for all)
//   CCR: β_k = (λ2 + t_k)·β        (TRADES only; λ2 = 0.5, β = 6)
// before that ε_k = ε and β_k = β. After every optimiser step a clean train-mode forward (CFA's train_epoch logs
// clean accuracy so, for every base: BN's running statistics see the clean batch too).
// FAWA (docs/protocols/cfa.md §3) is the trainer's --ema fawa; its defaults are the paper's (decay 0.85, threshold 0.2, from epoch 50),
// where CFA's code runs decay 0.88, threshold 0.24, from epoch 0 (--ema-decay, --fawa-threshold, --ema-start).
// λ1 keeps the paper's per-base values by default; the code's 0.5 for every base is --cfa-lambda 0.5.
#include <memory>

#include "attacks/pgd.h"
#include "train/methods/fat.h"
#include "train/methods/method_options.h"
#include "train/methods/trades.h"

namespace cw::train {

enum class CfaBase { At, Trades, Fat };

class Cfa : public Method {
public:
    Cfa(CfaBase base, const MethodOptions& o);
    std::string name() const override;
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    EpochDecision end_epoch(const EpochEnd& end) override;
    CleanForward clean_forward_after_step() const override;

    std::vector<std::string> class_state_names() const override;
    std::vector<std::vector<double>> class_state() const override;
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    // The values the next batch uses (empty until the number of classes is known).
    const std::vector<float>& class_eps() const { return class_eps_; }
    const std::vector<float>& class_beta() const { return class_beta_; }
    const std::vector<double>& t() const { return t_; }
    float lambda_eps() const { return lambda_eps_; }

private:
    void ensure_classes(int num_classes);
    void push_to_base();

    CfaBase base_;
    float eps_, beta_, lambda_eps_, lambda_beta_;
    int begin_;
    bool ccm_, ccr_;
    CleanForward clean_forward_;
    std::unique_ptr<attacks::Pgd> at_attack_;
    std::unique_ptr<Trades> trades_;
    std::unique_ptr<Fat> fat_;
    std::vector<float> class_eps_, class_beta_;
    std::vector<double> t_;
};

}  // namespace cw::train
