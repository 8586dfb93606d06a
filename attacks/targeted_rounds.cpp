#include "attacks/targeted_rounds.h"

#include <algorithm>

#include "attacks/losses.h"

namespace cw::attacks {

Perturbation run_targeted_rounds(AttackContext& ctx, const ModelOutput& clean, int n_target_classes, int restarts,
                                 const TargetedRun& run) {
    Perturbation p{ctx.x.clone(), {}, {}};
    const int64_t C = clean.classes;
    const std::vector<int32_t>& labels = ctx.host_y();
    std::vector<uint8_t> robust(static_cast<size_t>(ctx.n()));
    for (int64_t i = 0; i < ctx.n(); ++i) robust[i] = clean.pred(i) == labels[i];

    const int n_targets = static_cast<int>(std::min<int64_t>(n_target_classes, C - 1));
    for (int rank = 2; rank <= n_targets + 1; ++rank) {
        for (int r = 0; r < restarts; ++r) {
            TargetedRound round;
            round.rows = where(robust);
            round.restart = r;
            if (round.rows.empty()) return p;
            for (int64_t i : round.rows) {
                round.y.push_back(labels[i]);
                round.targets.push_back(kth_largest(clean.row(i), C, rank));
                round.eps.push_back(ctx.eps[i]);
            }
            Tensor adv;
            const std::vector<uint8_t> broken = run(round, adv);
            adopt_broken(p.x_adv, robust, round.rows, adv, broken);
        }
    }
    return p;
}

}  // namespace cw::attacks
