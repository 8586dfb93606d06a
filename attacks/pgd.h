#pragma once
// PGD (Madry et al.; docs/protocols/attacks.md §2, §3): K projected steepest-ascent steps from a random start, L∞ or L2,
// untargeted or targeted, CE or CW-margin objective, per-sample ε_i and α_i, restarts.
//
//   δ ← start;  repeat K: δ ← δ + α·sign(∇J) (L∞) or α·∇J/||∇J||₂ (L2);  project to the ε_i-ball, then the box
//
// J is always maximised: CE(f, y) untargeted, −CE(f, t) targeted (so the step descends the CE towards t),
// −max(m + κ, 0) for the CW margin, z_t − max_{j≠t} z_j for the targeted margin.
// Returned point: the last iterate (Madry/Rice/CFA). With restarts > 1 every sample keeps one restart's last
// iterate: a successful one if any restart succeeded ("any restart succeeds ⇒ broken", §2.1), among those (or
// among all, if none succeeded) the one with the highest final objective (Rice's max-loss rule; ties: later).
#include <string>

#include "attacks/attack.h"
#include "attacks/targets.h"

namespace cw::attacks {

enum class PgdLoss { CE, Margin };
enum class RandomStart { None, Uniform, Normal };   // Uniform: U(−ε,ε) (L∞) / uniform-radius Gaussian dir. (L2)
enum class StepRule {
    Fixed,               // α for every sample (CFA / FAIR-TAT keep α = 2/255 even when ε_i ≈ 4/255)
    QuarterEps,          // α_i = ε_i / 4
    BatchMaxQuarterEps,  // α = max_i ε_i / 4 for the whole batch (FRL Reweight+Remargin)
};

struct PgdConfig {
    Norm norm = Norm::Linf;
    float eps = 8.f / 255;
    float alpha = 2.f / 255;
    int steps = 10;
    int restarts = 1;
    RandomStart start = RandomStart::Uniform;
    float start_sigma = 0.001f;        // RandomStart::Normal (TRADES / MART)
    PgdLoss loss = PgdLoss::CE;
    float kappa = 0.f;                 // CW confidence (κ = 50: WAT's CW∞)
    bool targeted = false;             // targets: PerSample::targets, else uniform ≠ y
    StepRule step_rule = StepRule::Fixed;
    // Rice's --eval early stop: samples that currently reach the goal are not moved. Weaker for non-monotone
    // losses; never use it for reported numbers (§2.1).
    bool freeze_reached = false;
    ModelMode mode = ModelMode::Eval;
    std::string name;                  // empty: pgd<K>, cw<K>, pgd<K>-targeted, pgd<K>-l2 ...
};

class Pgd : public Attack {
public:
    explicit Pgd(PgdConfig c);
    std::string name() const override { return name_; }
    nlohmann::json config() const override;
    bool targeted() const override { return c_.targeted; }
    const PgdConfig& settings() const { return c_; }

protected:
    Perturbation perturb(AttackContext& ctx) override;

private:
    std::vector<float> step_sizes(const AttackContext& ctx) const;
    Tensor start(AttackContext& ctx) const;
    Objective objective(AttackContext& ctx, TargetChoice& target) const;
    PgdConfig c_;
    std::string name_;
};

}  // namespace cw::attacks
