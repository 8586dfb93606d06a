#pragma once
// AutoAttack "standard" (Croce & Hein 2020; docs/protocols/attacks.md §8), L∞: APGD-CE, APGD-T, FAB-T, Square-5000, each run only
// on the points still robust after the previous ones (ensemble.h). Settings per attack:
//   APGD-CE: 100 iterations, 1 restart, ρ = 0.75        APGD-T: 100 iterations, 1 restart, 9 target classes
//   FAB-T:   100 iterations, 1 restart, 9 targets       Square: 5000 queries, p_init = 0.8, 1 restart
// L2 AutoAttack would need L2 versions of FAB-T and Square, which we do not have; asking for it throws.
#include <memory>

#include "attacks/ensemble.h"

namespace cw::attacks {

struct AutoAttackConfig {
    float eps = 8.f / 255;
    Norm norm = Norm::Linf;
    int n_iter = 100;            // APGD-CE, APGD-T, FAB-T
    int n_target_classes = 9;    // APGD-T, FAB-T
    int square_queries = 5000;
    ModelMode mode = ModelMode::Eval;
};

std::unique_ptr<Ensemble> make_autoattack(const AutoAttackConfig& c = {});

}  // namespace cw::attacks
