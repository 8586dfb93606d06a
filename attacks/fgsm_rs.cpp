#include "attacks/fgsm_rs.h"

#include <nlohmann/json.hpp>

#include "attacks/losses.h"
#include "attacks/steps.h"

namespace cw::attacks {

nlohmann::json FgsmRs::config() const {
    auto j = base_config("fgsm_rs");
    j["alpha"] = c_.alpha_factor * c_.eps;
    j["steps"] = 1;
    j["restarts"] = 1;
    j["random_start"] = true;
    return j;
}

Perturbation FgsmRs::perturb(AttackContext& ctx) {
    std::vector<float> alpha = ctx.per_sample.alpha;
    if (alpha.empty())
        for (float e : ctx.eps) alpha.push_back(c_.alpha_factor * e);

    Perturbation p{uniform_linf_start(ctx.x, ctx.eps, ctx.rng), {}, {}};   // δ ~ U(−ε, ε), box-clipped
    const Objective ce = [&](int64_t i, const float* z, int64_t C, float* dz) {
        return cross_entropy(z, C, ctx.y[i], dz);
    };
    const ModelOutput out = ctx.model.value_and_grad(p.x_adv, ce);
    sign_step(p.x_adv, out.grad, alpha);
    project_linf(p.x_adv, ctx.x, ctx.eps);   // clip δ to ±ε, then to the box
    return p;
}

}  // namespace cw::attacks
