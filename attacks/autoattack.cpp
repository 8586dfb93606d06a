#include "attacks/autoattack.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/apgd.h"
#include "attacks/apgd_targeted.h"
#include "attacks/fab.h"
#include "attacks/square.h"

namespace cw::attacks {

std::unique_ptr<Ensemble> make_autoattack(const AutoAttackConfig& c) {
    if (c.norm != Norm::Linf)
        throw std::invalid_argument("autoattack: only the L-inf version is implemented (no L2 FAB-T / Square)");
    std::vector<std::unique_ptr<Attack>> parts;
    parts.push_back(std::make_unique<Apgd>(ApgdConfig{c.norm, c.eps, c.n_iter, 1, 0.75f, ApgdLoss::CE, c.mode}));
    parts.push_back(std::make_unique<ApgdTargeted>(
        ApgdTargetedConfig{c.norm, c.eps, c.n_iter, 1, 0.75f, c.n_target_classes, c.mode}));
    FabConfig fab;
    fab.eps = c.eps;
    fab.n_iter = c.n_iter;
    fab.n_target_classes = c.n_target_classes;
    fab.mode = c.mode;
    parts.push_back(std::make_unique<FabTargeted>(fab));
    SquareConfig sq;
    sq.eps = c.eps;
    sq.n_queries = c.square_queries;
    sq.mode = c.mode;
    parts.push_back(std::make_unique<Square>(sq));
    return std::make_unique<Ensemble>("autoattack", nlohmann::json{{"version", "standard"}}, std::move(parts),
                                      c.mode);
}

}  // namespace cw::attacks
