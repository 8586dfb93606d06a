#pragma once
// Settings of the CFA and FAIR-TAT methods (docs/protocols/cfa.md, docs/protocols/fair_tat.md), part of train::MethodOptions.
namespace cw::train {

enum class TargetPrior {
    Softmax,        // π = softmax(scale·CFP) (FAIR-TAT code, scale 2)
    Proportional,   // π ∝ max(CFP_k, floor) (paper wording; the floor keeps every class reachable)
};

struct CfaOptions {
    // CFA (docs/protocols/cfa.md). Class-wise values used in epoch e >= begin come from epoch e−1's training statistics.
    float lambda_eps = -1;        // CCM λ1; < 0: the paper's value per base (AT 0.5, TRADES 0.3, FAT 0.7)
    float lambda_beta = 0.5f;     // CCR λ2
    int begin = 10;               // first epoch with calibrated ε_k / β_k (CFA code); short runs lower it
    bool ccm = true;              // class-wise calibrated margin ε_k = (λ1 + t_k)·ε
    bool ccr = true;              // class-wise calibrated TRADES β_k = (λ2 + t_k)·β (cfa_trades only)

    // FAIR-TAT (docs/protocols/fair_tat.md).
    float tat_lambda = 0.5f;      // ε_k = (λ + r_k)·ε (code --lambda-r)
    int tat_begin = 1;            // first epoch with ε scaling and the CFP prior (code)
    bool tat_eps_scaling = true;  // CCM on targeted training accuracy; off: ε_k = ε
    TargetPrior tat_prior = TargetPrior::Softmax;
    float tat_softmax_scale = 2.f;
    float tat_floor = 0.01f;      // Proportional prior: CFP_k below this counts as this
    bool tat_random_target = false;   // ablation: targets uniform over classes ≠ y in every epoch
};

}  // namespace cw::train
