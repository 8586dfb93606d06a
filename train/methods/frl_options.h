#pragma once
// Settings of the FRL and WAT methods (docs/protocols/frl.md, docs/protocols/wat.md), part of train::MethodOptions.
// A negative value means "the variant's default" where FRL's three scripts differ (docs/protocols/frl.md §3).
namespace cw::train {

struct FrlOptions {
    // FRL (docs/protocols/frl.md §2, §3). Where the three scripts differ the default (< 0) is the script of the variant, which is what
    // produced the paper's numbers (frlrw.py, frlrm.py, frlrmrw.py; frl_resolved in frl.h lists them):
    //   tau1 / tau2: 0.10 / 0.10 reweight and remargin, 0.07 / 0.07 reweight+remargin (the paper's text: 0.05 / 0.07)
    //   beta: 1.5 reweight and reweight+remargin, 1.0 remargin;  lim: 0.5 reweight and reweight+remargin, 0.3 remargin
    double tau1 = -1;               // clean-error violation tolerance τ1
    double tau2 = -1;               // boundary-error violation tolerance τ2
    double r1 = 0.05;               // multiplier step of λ_nat (λ_bdy takes 2·r1); halved every `halve_every` epochs
    int halve_every = 40;           // r1 ← r1/2 when the 1-based epoch t is a multiple of this
    double r2 = -1;                  // step of λ_m; < 0: 0.2 (reweight+remargin), 0.1 (remargin)
    double beta = -1;               // KL weight of FRL's cost-sensitive TRADES loss
    double lim = -1;                // Norm projection bound Σλ ≤ lim (frl_baseline_rw: 0.5)
    double m_lo = 0.98;             // ε multiplier clip m(i) ∈ [m_lo, m_hi]
    double m_hi = -1;                // < 0: 3.0 (reweight+remargin), 2.5 (remargin)
    float attack_step = -1;         // TRADES inner step s_att; < 0: ε/4 (2/255 at 8/255), per batch max_b(ε_b)/4 for RWRM
    int val_steps = 20;             // validation PGD steps (PGD-20, α = ε/4, uniform start, eval mode)
    double baseline_tau = 0.05;     // frl_baseline_rw: robust-error tolerance τ (docs/protocols/frl.md §4)

    // WAT (docs/protocols/wat.md)
    double wat_eta = 0.1;           // Hedge rate η
    double wat_beta = 6.;           // TRADES β of WAT's loss and validation cost
};

}  // namespace cw::train
