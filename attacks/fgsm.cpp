#include "attacks/fgsm.h"

#include <nlohmann/json.hpp>

#include "attacks/targets.h"

namespace cw::attacks {

nlohmann::json Fgsm::config() const {
    auto j = base_config("fgsm");
    j["alpha"] = c_.eps;
    j["steps"] = 1;
    j["restarts"] = 1;
    j["random_start"] = false;
    return j;
}

Perturbation Fgsm::perturb(AttackContext& ctx) {
    TargetChoice target = target_choice(ctx);
    // Both directions as one ascent: untargeted ascends CE(·, y), targeted ascends −CE(·, t).
    Objective J{AttackObjective::CrossEntropy, ctx.labels, {}, 0.f};
    if (c_.targeted) {
        J.kind = AttackObjective::TargetCrossEntropy;
        J.targets = target.all_on(ctx.model.num_classes(ctx.x), ctx.device());
    }
    const Evaluation e = ctx.model.value_and_grad(ctx.x, J);
    NoGradGuard bookkeeping;
    Tensor x_adv = ctx.x.clone();
    attack_step_(AttackNorm::Linf, x_adv, e.grad, ctx.x, ctx.eps_t, ctx.eps_t);   // FGSM's step size is ε itself
    return {std::move(x_adv), target.all(), {}};
}

}  // namespace cw::attacks
