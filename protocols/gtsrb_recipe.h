#pragma once
// How Xu et al.'s GTSRB experiments train here. The paper gives only the 4-layer CNN and ε = 12/255; the rest is
// the project's GTSRB baseline recipe (docs/baselines.md): Adam 1e-3 without weight decay for 60 epochs. Shared by
// xu_preliminary (§2) and frl_tables (§5) so both papers' sections train GTSRB the same way.
#include "jobs/job.h"

namespace cw::protocols {

inline void use_gtsrb_recipe(train::JobConfig& job) {
    job.arch = "gtsrb_cnn";
    job.eps = "12/255";
    job.common.epochs = 60;
    job.trainer.recipe.optimizer = "adam";
    job.trainer.recipe.lr = 1e-3;
    job.trainer.recipe.weight_decay = 0;
}

}  // namespace cw::protocols
