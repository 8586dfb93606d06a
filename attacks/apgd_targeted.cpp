#include "attacks/apgd_targeted.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/losses.h"

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
    Perturbation p{ctx.x, {}, {}};
    const ModelOutput clean = ctx.model.forward(ctx.x);
    const int64_t C = clean.classes;
    if (C < 4) throw std::invalid_argument("APGD-T needs at least 4 classes (targeted DLR), the model has " +
                                           std::to_string(C));
    std::vector<uint8_t> robust(ctx.x.n);
    for (int64_t i = 0; i < ctx.x.n; ++i) robust[i] = clean.pred(i) == ctx.y[i];

    const int n_targets = static_cast<int>(std::min<int64_t>(c_.n_target_classes, C - 1));
    for (int rank = 2; rank <= n_targets + 1; ++rank) {
        for (int r = 0; r < c_.restarts; ++r) {
            const std::vector<int64_t> idx = where(robust);
            if (idx.empty()) return p;
            std::vector<int32_t> y, t;
            std::vector<float> eps;
            for (int64_t i : idx) {
                y.push_back(ctx.y[i]);
                t.push_back(kth_largest(clean.row(i), C, rank));
                eps.push_back(ctx.eps[i]);
            }
            const Objective J = [&](int64_t i, const float* z, int64_t nc, float* dz) {
                return dlr_targeted(z, nc, y[i], t[i], dz);
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
    }
    return p;
}

}  // namespace cw::attacks
