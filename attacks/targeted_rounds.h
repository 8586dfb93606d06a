#pragma once
// AutoAttack's schedule for its targeted parts (APGD-T, FAB-T; docs/protocols/attacks.md §5, §7): for the target ranks 2 .. n+1
// (the k-th largest clean logit of each sample) and each restart, attack only the samples still robust; a sample
// broken in a round keeps that round's adversarial point and leaves the pool.
#include <functional>
#include <vector>

#include "attacks/attack.h"

namespace cw::attacks {

// One round's samples (rows of the original batch) with their labels, targets and radii.
struct TargetedRound {
    std::vector<int64_t> rows;
    std::vector<int32_t> y, targets;
    std::vector<float> eps;
    int restart = 0;
};

// Runs the attack on a round's samples; fills adv (one row per sample of the round, on the device) and returns,
// per sample, whether it was broken.
using TargetedRun = std::function<std::vector<uint8_t>(const TargetedRound& round, Tensor& adv)>;

// clean: the model's logits at the clean batch (host, [N, C]).
Perturbation run_targeted_rounds(AttackContext& ctx, const ModelOutput& clean, int n_target_classes, int restarts,
                                 const TargetedRun& run);

}  // namespace cw::attacks
