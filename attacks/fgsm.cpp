#include "attacks/fgsm.h"

#include <nlohmann/json.hpp>

#include "attacks/losses.h"
#include "attacks/steps.h"
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
    TargetChoice target(ctx.y, ctx.per_sample.targets, ctx.rng);
    // Both directions as one ascent: untargeted ascends CE(·, y), targeted ascends −CE(·, t).
    const Objective J = [&](int64_t i, const float* z, int64_t C, float* dz) {
        return c_.targeted ? neg_cross_entropy(z, C, target(i, C), dz) : cross_entropy(z, C, ctx.y[i], dz);
    };
    const ModelOutput out = ctx.model.value_and_grad(ctx.x, J);

    Perturbation p{ctx.x, target.all(), {}};
    sign_step(p.x_adv, out.grad, ctx.eps);   // the step size of FGSM is ε itself
    clip_box(p.x_adv);
    return p;
}

}  // namespace cw::attacks
