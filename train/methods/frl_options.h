#pragma once
// Settings of the FRL and WAT methods (fairness.md §B, §E.1), part of train::MethodOptions. A negative value means
// "the variant's default" where FRL's three scripts differ (§B.3).
namespace cw::train {

struct FrlOptions {
    // FRL (§B.2, B.3); defaults are §B.3's "Default for us" line.
    double tau1 = 0.05;             // clean-error violation tolerance τ1
    double tau2 = 0.07;             // boundary-error violation tolerance τ2
    double r1 = 0.05;               // multiplier step of λ_nat (λ_bdy takes 2·r1); halved every `halve_every` epochs
    int halve_every = 40;           // r1 ← r1/2 when the 1-based epoch t is a multiple of this
    double r2 = -1;                  // step of λ_m; < 0: 0.2 (reweight+remargin), 0.1 (remargin)
    double beta = 1.5;              // KL weight of FRL's cost-sensitive TRADES loss (frlrm.py used 1.0)
    double lim = 0.5;               // Norm projection bound Σλ ≤ lim (frlrm.py used 0.3; §B.3's default is 0.5)
    double m_lo = 0.98;             // ε multiplier clip m(i) ∈ [m_lo, m_hi]
    double m_hi = -1;                // < 0: 3.0 (reweight+remargin), 2.5 (remargin)
    float attack_step = -1;         // TRADES inner step s_att; < 0: ε/4 (2/255 at 8/255), per batch max_b(ε_b)/4 for RWRM
    int val_steps = 20;             // validation PGD steps (PGD-20, α = ε/4, uniform start, eval mode)
    double baseline_tau = 0.05;     // frl_baseline_rw: robust-error tolerance τ (§B.4)

    // WAT (§E.1)
    double wat_eta = 0.1;           // Hedge rate η
    double wat_beta = 6.;           // TRADES β of WAT's loss and validation cost
};

}  // namespace cw::train
