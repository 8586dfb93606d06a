#pragma once
// APGD-T (docs/protocols/attacks.md §4.5): Auto-PGD on the targeted DLR loss, once per target class, on the samples still robust.
//   adv = x; robust = [argmax f(x) = y]
//   for target_rank = 2 .. n_target_classes + 1:          (t = the target_rank-th largest CLEAN logit)
//     for each restart: run §4.3 with DLR_T(·, y, t) on the robust samples; broken ones take x_best_adv
// Standard AutoAttack: 100 iterations, 1 restart, 9 target classes (C − 1 when C ≤ 9). Needs C ≥ 4.
#include <string>

#include "attacks/apgd_core.h"

namespace cw::attacks {

struct ApgdTargetedConfig {
    Norm norm = Norm::Linf;
    float eps = 8.f / 255;
    int n_iter = 100;
    int restarts = 1;
    float rho = 0.75f;
    int n_target_classes = 9;
    ModelMode mode = ModelMode::Eval;
};

class ApgdTargeted : public Attack {
public:
    explicit ApgdTargeted(ApgdTargetedConfig c);
    std::string name() const override { return "apgd-t"; }
    nlohmann::json config() const override;

protected:
    Perturbation perturb(AttackContext& ctx) override;

private:
    ApgdTargetedConfig c_;
};

}  // namespace cw::attacks
