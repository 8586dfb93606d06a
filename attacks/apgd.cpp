#include "attacks/apgd.h"

#include <nlohmann/json.hpp>
#include <stdexcept>


namespace cw::attacks {

Apgd::Apgd(ApgdConfig c) : Attack(c.norm, c.eps, c.mode), c_(c) {
    if (c_.n_iter < 1 || c_.restarts < 1) throw std::invalid_argument("APGD: n_iter and restarts must be >= 1");
}

nlohmann::json Apgd::config() const {
    auto j = base_config("apgd");
    j["loss"] = c_.loss == ApgdLoss::CE ? "ce" : "dlr";
    j["steps"] = c_.n_iter;
    j["restarts"] = c_.restarts;
    j["rho"] = c_.rho;
    j["random_start"] = true;
    return j;
}

Perturbation Apgd::perturb(AttackContext& ctx) {
    Perturbation p{ctx.x.clone(), {}, {}};
    const std::vector<int32_t> clean_pred = ctx.model.predict(ctx.x);
    const std::vector<int32_t>& labels = ctx.host_y();
    std::vector<uint8_t> robust(ctx.n());
    for (int64_t i = 0; i < ctx.n(); ++i) robust[i] = clean_pred[i] == labels[i];

    // Each restart attacks the samples still robust: their subset crosses to the device once per restart.
    for (int r = 0; r < c_.restarts; ++r) {
        const std::vector<int64_t> idx = where(robust);
        if (idx.empty()) break;
        std::vector<int32_t> y;
        std::vector<float> eps;
        for (int64_t i : idx) {
            y.push_back(labels[i]);
            eps.push_back(ctx.eps[i]);
        }
        const Objective J = make_objective(c_.loss == ApgdLoss::CE ? AttackObjective::CrossEntropy : AttackObjective::Dlr,
                                           y, ctx.device());
        const ApgdRunResult run = apgd_run(ctx.model, take_rows(ctx.x, idx), eps, J, {c_.norm, c_.n_iter, c_.rho}, ctx.rng);
        adopt_broken(p.x_adv, robust, idx, run.x_best_adv, run.broken());
    }
    return p;
}

}  // namespace cw::attacks
