#include "attacks/apgd.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/losses.h"

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
    Perturbation p{ctx.x, {}, {}};
    const std::vector<int32_t> clean_pred = ctx.model.forward(ctx.x).preds();
    std::vector<uint8_t> robust(ctx.x.n);
    for (int64_t i = 0; i < ctx.x.n; ++i) robust[i] = clean_pred[i] == ctx.y[i];

    for (int r = 0; r < c_.restarts; ++r) {
        const std::vector<int64_t> idx = where(robust);
        if (idx.empty()) break;
        std::vector<int32_t> y;
        std::vector<float> eps;
        for (int64_t i : idx) {
            y.push_back(ctx.y[i]);
            eps.push_back(ctx.eps[i]);
        }
        const Objective J = [&](int64_t i, const float* z, int64_t C, float* dz) {
            return c_.loss == ApgdLoss::CE ? cross_entropy(z, C, y[i], dz) : dlr(z, C, y[i], dz);
        };
        const ApgdRunResult run = apgd_run(ctx.model, take_rows(ctx.x, idx), y, eps, J,
                                           {c_.norm, c_.n_iter, c_.rho}, ctx.rng);
        for (size_t k = 0; k < idx.size(); ++k) {
            if (run.robust[k]) continue;
            robust[idx[k]] = 0;
            std::copy(run.x_best_adv.row(static_cast<int64_t>(k)),
                      run.x_best_adv.row(static_cast<int64_t>(k)) + p.x_adv.dim(), p.x_adv.row(idx[k]));
        }
    }
    return p;
}

}  // namespace cw::attacks
