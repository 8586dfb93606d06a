#pragma once
// FRL — Fair Robust Learning (Xu et al. 2021), as the reference code runs it (docs/protocols/frl.md §2, §3).
// At the START of every epoch: PGD-20 (ε, α = ε/4, uniform start, eval mode) on the validation split, per-class
// violations against the overall errors, the multiplier ascent of frl_update.h, then the class costs
// w_nat, w_bdy and ε multipliers m. Each batch:
//   x' = TRADES-KL attack with ε_b = ε·m(y_b), step s_att (ε/4; RWRM: max_b(ε_b)/4 per batch)
//   per_sample_b = w_nat(y_b)·CE_b / Σ w_nat(y) + β·w_bdy(y_b)·KL_b / Σ w_bdy(y)          (sums over the batch)
//   (remargin, as frlrm.py: per_sample_b = (w_nat(y_b)·CE_b + β·w_bdy(y_b)·KL_b) / Σ (w_nat(y) + w_bdy(y)))
// Variants: reweight (λ_nat, λ_bdy; m ≡ 1), remargin (λ_nat, λ_m; w_bdy = 1/C), reweight+remargin (all three).
// The validation errors are the code's: robust = correct under the attack, whatever the clean prediction (the
// evaluator's AutoAttack rule, robust = clean-correct and not broken, stays for every reported number).
#include "attacks/pgd.h"
#include "fairness/methods/frl_update.h"
#include "fairness/methods/weighted_trades.h"
#include "train/methods/method_options.h"

namespace cw::train {

enum class FrlVariant { Reweight, Remargin, ReweightRemargin };

// `f` with every "variant's default" (< 0) filled in from the variant's script: τ1 = τ2 = 0.10 (reweight,
// remargin) or 0.07 (reweight+remargin); β 1.5 (1.0 remargin); lim 0.5 (0.3 remargin); r2 0.2 (0.1 remargin);
// m_hi 3.0 (2.5 remargin). The paper's text gives τ1 0.05, τ2 0.07: flags.
FrlOptions frl_resolved(FrlVariant v, FrlOptions f);

class Frl : public Method {
public:
    Frl(FrlVariant variant, const MethodOptions& o);
    std::string name() const override;
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    void start_epoch(const EpochStart& start) override;

    std::vector<std::string> class_state_names() const override;
    std::vector<std::vector<double>> class_state() const override;
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    // The epoch-start update from given validation accuracies (what start_epoch does after its evaluation).
    void update(int64_t epoch, const std::vector<double>& acc_nat, const std::vector<double>& acc_rob,
                double overall_nat, double overall_rob);
    // The TRADES inner attack of a batch: ε·m(k) per class and the step s_att (ε/4, or --frl-attack-step; RWRM by
    // default max over the batch's samples of ε_b, /4).
    struct AttackSettings {
        std::vector<float> eps_per_class;
        float step;
    };
    AttackSettings attack_settings(const std::vector<int32_t>& labels) const;
    // w_nat(y_i)/Σ_b w_nat(y_b) and β·w_bdy(y_i)/Σ_b w_bdy(y_b) for a batch's labels.
    TradesCoefficients loss_coefficients(const std::vector<int32_t>& labels) const;
    const FrlMultipliers& multipliers() const { return lambda_; }
    const std::vector<double>& w_nat() const { return w_nat_; }
    const std::vector<double>& w_bdy() const { return w_bdy_; }
    const std::vector<double>& eps_mult() const { return m_; }
    const FrlOptions& settings() const { return o_.frl; }   // resolved (frl_resolved)
    double r1_used() const { return r1_used_; }

private:
    void ensure_classes(int c);
    void refresh_costs();

    FrlVariant variant_;
    MethodOptions o_;
    FrlUpdateRule rule_;
    double m_hi_;
    float step_;                 // s_att for reweight / remargin
    attacks::Pgd val_attack_;
    int classes_ = 0;
    FrlMultipliers lambda_;
    FrlViolations violations_;
    std::vector<double> w_nat_, w_bdy_, m_;
    double r1_used_ = 0;
};

}  // namespace cw::train
