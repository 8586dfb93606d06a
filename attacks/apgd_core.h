#pragma once
// One run of Auto-PGD (Croce & Hein 2020) on a batch, exactly as docs/protocols/attacks.md §4.3: momentum steps with a
// per-sample step size η (initially 2ε) that halves at checkpoints where the objective oscillates or stalls, with a
// restart from the best point found. Shared by APGD-CE / APGD-DLR (apgd.h) and APGD-T (apgd_targeted.h).
// Every per-sample decision (best points, step-size checks) is a 0/1 tensor on the model's device: an iteration
// copies nothing to the host. The step and projection are the PGD kernel's (engine/attack_math.h); for L2 its
// 1e-10 guard stands where the reference code adds 1e-12 to the norms (a difference below float resolution for
// any gradient or perturbation that is not itself ~1e-10).
#include <vector>

#include "attacks/attack.h"

namespace cw::attacks {

struct ApgdSettings {
    Norm norm = Norm::Linf;
    int n_iter = 100;
    float rho = 0.75f;           // oscillation threshold
};

struct ApgdRunResult {
    Tensor x_best_adv;           // last misclassified iterate (x0 for samples never misclassified), on the device
    Tensor robust;               // [n] 1 while correctly classified at every iterate, on the device
    std::vector<uint8_t> broken() const;   // host flags: misclassified at some iterate
};

// Checkpoint lengths: first max(⌊0.22N⌋,1), then shrinking by max(⌊0.03N⌋,1) down to max(⌊0.06N⌋,1).
struct ApgdSchedule {
    int first, shrink, min;
    explicit ApgdSchedule(int n_iter);
    // 0-based iterations after which the step-size check runs (N = 100: 21, 40, 56, 69, 79, 86, 92, 98).
    std::vector<int> check_iterations(int n_iter) const;
};

// x: the clean images of the run's samples (device); eps: their radii (host, one per sample); J: the objective to
// maximise (CE, DLR, targeted DLR) with those samples' labels and targets.
ApgdRunResult apgd_run(ModelOracle& model, const Tensor& x, const std::vector<float>& eps, const Objective& J,
                       const ApgdSettings& s, Rng& rng);

// Per iteration i, per sample: the objective at the new iterate, and the step size η after that iteration's
// check. Copied to the host each iteration, so for tests only (the reference trajectory of
// tools/make_apgd_reference.py).
struct ApgdTrace {
    std::vector<std::vector<float>> objective, eta;
};
// The same run from a given start x0 (apgd_run draws it: x + ε·t/||t||, box-clipped).
ApgdRunResult apgd_run_from(ModelOracle& model, const Tensor& x, const Tensor& x0, const std::vector<float>& eps,
                            const Objective& J, const ApgdSettings& s, ApgdTrace* trace = nullptr);

}  // namespace cw::attacks
