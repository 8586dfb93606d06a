#pragma once
// One run of Auto-PGD (Croce & Hein 2020) on a batch, exactly as attacks.md §4.3: momentum steps with a
// per-sample step size η (initially 2ε) that halves at checkpoints where the objective oscillates or stalls, with a
// restart from the best point found. Shared by APGD-CE / APGD-DLR (apgd.h) and APGD-T (apgd_targeted.h).
#include <vector>

#include "attacks/attack.h"

namespace cw::attacks {

struct ApgdSettings {
    Norm norm = Norm::Linf;
    int n_iter = 100;
    float rho = 0.75f;           // oscillation threshold
};

struct ApgdRunResult {
    Images x_best_adv;           // last misclassified iterate (x0 for samples never misclassified)
    std::vector<uint8_t> robust; // still correctly classified at every iterate
};

// Checkpoint lengths: first max(⌊0.22N⌋,1), then shrinking by max(⌊0.03N⌋,1) down to max(⌊0.06N⌋,1).
struct ApgdSchedule {
    int first, shrink, min;
    explicit ApgdSchedule(int n_iter);
    // 0-based iterations after which the step-size check runs (N = 100: 21, 40, 56, 69, 79, 86, 92, 98).
    std::vector<int> check_iterations(int n_iter) const;
};

// J is the per-sample objective to maximise (CE, DLR, targeted DLR); eps one entry per sample.
ApgdRunResult apgd_run(ModelOracle& model, const Images& x, const std::vector<int32_t>& y,
                       const std::vector<float>& eps, const Objective& J, const ApgdSettings& s, Rng& rng);

}  // namespace cw::attacks
