#pragma once
// APGD-CE / APGD-DLR (docs/protocols/attacks.md §4.4): untargeted Auto-PGD with restarts on the samples that are still robust.
//   adv = x; robust = [argmax f(x) = y]
//   for each restart: run §4.3 (apgd_core.h) on the robust samples; the broken ones take the run's x_best_adv
// Defaults = AutoAttack "standard": 100 iterations, 1 restart, ρ = 0.75.
#include <string>

#include "attacks/apgd_core.h"

namespace cw::attacks {

enum class ApgdLoss { CE, DLR };

struct ApgdConfig {
    Norm norm = Norm::Linf;
    float eps = 8.f / 255;
    int n_iter = 100;
    int restarts = 1;
    float rho = 0.75f;
    ApgdLoss loss = ApgdLoss::CE;
    ModelMode mode = ModelMode::Eval;
};

class Apgd : public Attack {
public:
    explicit Apgd(ApgdConfig c);
    std::string name() const override { return c_.loss == ApgdLoss::CE ? "apgd-ce" : "apgd-dlr"; }
    nlohmann::json config() const override;

protected:
    Perturbation perturb(AttackContext& ctx) override;

private:
    ApgdConfig c_;
};

}  // namespace cw::attacks
