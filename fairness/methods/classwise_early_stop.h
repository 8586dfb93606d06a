#pragma once
// BAT's source-class part (docs/protocols/bat.md, our reconstruction): FAT's early-stopped PGD with the CFA / FAIR-TAT
// bookkeeping (attacks/early_stop_pgd.h, FatSemantics::Cfa: L∞, CE, uniform start, ω = 0, counter_i starts at τ; the
// sample moves at a check while counter_i > 0 there, and counter_i drops after a check that finds it
// misclassified), but with the
// budget per sample, τ_i = τ_{y_i}. EarlyStopPgd takes one τ per batch, so this is the same loop with a vector of
// counters: one attack per batch; with every τ_k equal it is EarlyStopPgd (cfa) step for step.
#include <cstdint>
#include <vector>

#include "attacks/attack.h"
#include "engine/rng.h"
#include "nn/module.h"

namespace cw::train {

struct ClasswiseEarlyStopConfig {
    float eps = 8.f / 255;
    float alpha = 2.f / 255;
    int steps = 10;
    attacks::ModelMode mode = attacks::ModelMode::Train;
};

// x_adv, without history; the model's mode is restored. tau_per_class[k] >= 0 for every class k.
Tensor classwise_early_stop_pgd(nn::Module& model, const Tensor& x, const Tensor& labels,
                                const std::vector<int32_t>& host_labels, const std::vector<int>& tau_per_class,
                                const ClasswiseEarlyStopConfig& c, Rng& rng);

// BAT's τ_k = round(τ_max · t_k), t_k = previous-epoch training robust accuracy of class k.
std::vector<int> bat_class_tau(const std::vector<double>& robust_accuracy, int tau_max);

}  // namespace cw::train
