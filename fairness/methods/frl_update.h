#pragma once
// FRL's multiplier ascent (docs/protocols/frl.md §2, the reference code's algorithm), as pure functions of the per-class
// validation accuracies, so the rule can be checked on numbers worked by hand:
//   γ_nat(i) = e_nat(i) − E_nat − τ1,   γ_bdy(i) = e_bdy(i) − E_bdy − τ2      (e_bdy = A_nat − A_rob per class)
//   λ_nat ← Norm(λ_nat + r1·γ_nat),  λ_bdy ← Norm(λ_bdy + 2·r1·γ_bdy),  λ_m ← λ_m + r2·γ_bdy (not projected)
//   w(i) = 1/C + λ(i) − mean(λ),  m(i) = clip(exp(2·λ_m(i)), m_lo, m_hi)
// with r1 halved at every multiple of `halve_every` (1-based epoch t, before that epoch's update).
#include <cstdint>
#include <vector>

namespace cw::train {

// Norm(v): v ← max(v, 0); if Σv > lim, v ← lim·v/Σv.
std::vector<double> frl_norm(std::vector<double> v, double lim);

// r1 in force at 0-based epoch `epoch` (t = epoch + 1): r1 / 2^floor(t / halve_every).
double frl_r1_at(double r1, int64_t epoch, int halve_every);

struct FrlValidationErrors {
    std::vector<double> nat, bdy;   // per class e_nat(i) = 1 − A_nat(i), e_bdy(i) = A_nat(i) − A_rob(i)
    double overall_nat = 0, overall_bdy = 0;   // E_nat, E_bdy from the overall accuracies
};
// From per-class and overall clean / robust accuracies. A class absent from the split (NaN accuracy) is given the
// overall errors, so it neither violates nor relaxes.
FrlValidationErrors frl_errors(const std::vector<double>& acc_nat, const std::vector<double>& acc_rob,
                               double overall_nat, double overall_rob);

struct FrlViolations {
    std::vector<double> nat, bdy;   // γ_nat, γ_bdy
};
FrlViolations frl_violations(const FrlValidationErrors& e, double tau1, double tau2);

struct FrlMultipliers {
    std::vector<double> nat, bdy, m;   // λ_nat, λ_bdy, λ_m
};
struct FrlUpdateRule {
    bool update_nat = true, update_bdy = true, update_m = false;   // which lines run (docs/protocols/frl.md §3's table)
    double r1 = 0.05, r2 = 0.2, lim = 0.5;
};
FrlMultipliers frl_update(const FrlMultipliers& lambda, const FrlViolations& g, const FrlUpdateRule& rule);

std::vector<double> frl_costs(const std::vector<double>& lambda);                       // 1/C + λ(i) − mean(λ)
std::vector<double> frl_eps_multipliers(const std::vector<double>& lambda_m, double lo, double hi);

}  // namespace cw::train
