#include "attacks/fab.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/attack_ops.h"
#include "attacks/targeted_rounds.h"

namespace cw::attacks {

FabTargeted::FabTargeted(FabConfig c) : Attack(Norm::Linf, c.eps, c.mode), c_(c) {
    if (c_.n_iter < 1 || c_.restarts < 1 || c_.n_target_classes < 1)
        throw std::invalid_argument("FAB-T: n_iter, restarts and n_target_classes must be >= 1");
}

nlohmann::json FabTargeted::config() const {
    auto j = base_config("fab-t");
    j["steps"] = c_.n_iter;
    j["restarts"] = c_.restarts;
    j["alpha_max"] = c_.alpha_max;
    j["eta"] = c_.eta;
    j["beta"] = c_.beta;
    j["n_target_classes"] = c_.n_target_classes;
    j["random_start"] = false;   // only restarts after the first start randomly
    j["targeted"] = true;        // targeted search; success = any misclassification within ε
    j["success"] = "misclassification";
    return j;
}

namespace {
// A restart's starting point, x + 0.5·ε·u/||u||_∞ in the box, u ~ U(−1, 1): drawn on the host, so the random
// stream is the reference's (the run's best distance is still +inf there, so the radius is half of ε).
Tensor random_start(Images x, const std::vector<float>& eps, Rng& rng, Device device) {
    std::vector<float> u(static_cast<size_t>(x.dim()));
    for (int64_t i = 0; i < x.n; ++i) {
        float un = 0.f;
        for (auto& v : u) {
            v = rng.uniform(-1.f, 1.f);
            un = std::max(un, std::fabs(v));
        }
        const float radius = 0.5f * eps[i];
        for (int64_t j = 0; j < x.dim(); ++j) x.row(i)[j] += radius * u[j] / un;
    }
    clip_box(x);
    return to_tensor(x, device);
}
}  // namespace

FabTargeted::RunResult FabTargeted::single_run(ModelOracle& model, const Tensor& x, Tensor x1,
                                               const std::vector<int32_t>& y, const std::vector<int32_t>& t) const {
    // Everything per iteration stays on the model's device: the gradient pass, the step, the check and the
    // bookkeeping of the best point.
    const Objective h = make_objective(AttackObjective::LogitDifference, y, model.device(), t);   // h = z_t − z_y
    Tensor best_adv = x.clone();
    Tensor best_dist = Tensor::full({x.size(0)}, std::numeric_limits<float>::infinity(), model.device());
    for (int it = 0; it < c_.n_iter; ++it) {
        const Evaluation lin = model.value_and_grad(x1, h);
        fab_step_(x1, x, lin.grad, lin.obj.value, c_.eta, c_.alpha_max);
        const Evaluation check = model.evaluate(x1, h);   // its `wrong`: argmax ≠ y
        fab_record_(x1, x, check.obj.wrong, c_.beta, best_adv, best_dist);
    }
    return {best_adv, best_dist.to_vector()};
}

Perturbation FabTargeted::perturb(AttackContext& ctx) {
    const ModelOutput clean = ctx.model.forward(ctx.x);
    return run_targeted_rounds(ctx, clean, c_.n_target_classes, c_.restarts,
                               [&](const TargetedRound& round, Tensor& adv) {
        const Tensor x = take_rows(ctx.x, round.rows);
        Tensor start = round.restart > 0 ? random_start(take_rows(ctx.host_x(), round.rows), round.eps, ctx.rng,
                                                        ctx.device())
                                         : x.clone();
        RunResult run = single_run(ctx.model, x, std::move(start), round.y, round.targets);
        adv = run.best_adv;
        std::vector<uint8_t> broken(round.rows.size());
        for (size_t k = 0; k < broken.size(); ++k) broken[k] = run.best_dist[k] <= round.eps[k];  // only within ε
        return broken;
    });
}

}  // namespace cw::attacks
