#include "attacks/apgd_targeted.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/targeted_rounds.h"

namespace cw::attacks {

ApgdTargeted::ApgdTargeted(ApgdTargetedConfig c) : Attack(c.norm, c.eps, c.mode), c_(c) {
    if (c_.n_iter < 1 || c_.restarts < 1 || c_.n_target_classes < 1)
        throw std::invalid_argument("APGD-T: n_iter, restarts and n_target_classes must be >= 1");
}

nlohmann::json ApgdTargeted::config() const {
    auto j = base_config("apgd-t");
    j["loss"] = "dlr-targeted";
    j["steps"] = c_.n_iter;
    j["restarts"] = c_.restarts;
    j["rho"] = c_.rho;
    j["n_target_classes"] = c_.n_target_classes;
    j["random_start"] = true;
    // A targeted loss, but success (as in AutoAttack) is any misclassification, not reaching the target.
    j["targeted"] = true;
    j["success"] = "misclassification";
    return j;
}

Perturbation ApgdTargeted::perturb(AttackContext& ctx) {
    const ModelOutput clean = ctx.model.forward(ctx.x);
    const int64_t C = clean.classes;
    if (C < 4) throw std::invalid_argument("APGD-T needs at least 4 classes (targeted DLR), the model has " +
                                           std::to_string(C));
    return run_targeted_rounds(ctx, clean, c_.n_target_classes, c_.restarts,
                               [&](const TargetedRound& round, Tensor& adv) {
        const Objective J = make_objective(AttackObjective::DlrTargeted, round.y, ctx.device(), round.targets);
        ApgdRunResult run = apgd_run(ctx.model, take_rows(ctx.x, round.rows), round.eps, J,
                                     {c_.norm, c_.n_iter, c_.rho}, ctx.rng);
        adv = run.x_best_adv;
        return run.broken();
    });
}

}  // namespace cw::attacks
