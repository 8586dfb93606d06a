#pragma once
// The per-class audit of a gradient step (--audit-steps N): which classes drive the update. With the batch loss
// L = Σ_i ℓ_i (train/method.h), class k's share of the parameter gradient is g_k = ∇_θ Σ_{i: y_i = k} ℓ_i, taken on
// the whole batch's graph (so train-mode BN, which couples the samples, is seen exactly as in the real step); the
// shares add up to the full gradient g = Σ_k g_k. For each class present we report its loss share, its sample count,
// ‖g_k‖ and cos(g_k, g). Cost: one backward pass per class present plus one; nothing when the audit is off.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace cw::train {

struct ClassShare {
    int64_t n = 0;           // samples of the class in the batch
    double loss = 0;         // Σ_{i: y_i = k} ℓ_i (the class's part of the batch loss)
    double grad_norm = 0;    // ‖g_k‖
    double cosine = 0;       // cos(g_k, g); 0 when either is zero
};

struct StepShares {
    double loss = 0;         // the batch loss Σ_i ℓ_i
    double grad_norm = 0;    // ‖g‖
    std::vector<ClassShare> classes;   // one per class (n = 0 for a class not in the batch)
    double residual = 0;     // ‖Σ_k g_k − g‖ / ‖g‖: float round-off only (checks the decomposition)
};

// Computes the shares with backward passes over `per_sample`'s graph and leaves the full gradient g in the
// parameters' .grad — exactly what per_sample.sum().backward() would have left — so the optimiser step that follows
// is the step an unaudited run takes. The parameters' gradients must be zero (or absent) on entry.
StepShares audit_gradient_shares(const Tensor& per_sample, const std::vector<int32_t>& labels, int num_classes,
                                 const std::vector<Tensor*>& params);

// steps.csv, long format: one row per audited step and class, plus a row "all" for the whole batch.
//   step,epoch,batch,lr,class,name,n,loss,loss_mean,grad_norm,cosine,<method state columns>
// step: optimiser steps taken before this one (0-based); epoch, batch: 1-based; loss: the class's share of the batch
// loss (the class rows add up to "all"); loss_mean = loss · B / n, the class's mean per-sample loss without the 1/B
// (the mean CE for the CE methods; on the "all" row the batch loss); cosine: with the full gradient (1 for "all");
// the method's per-class state (e.g. eps, weight) follows, empty on the "all" row.
class StepsCsv {
public:
    // Opens `path`; with resume_after_step >= 0 it keeps the rows of steps <= that step (a resumed run continues
    // the file without duplicates), else it starts a new file.
    StepsCsv(const std::string& path, std::vector<std::string> class_names, std::vector<std::string> state_names,
             int64_t resume_after_step = -1);
    void write(int64_t step, int64_t epoch, int64_t batch, double lr, const StepShares& shares,
               const std::vector<std::vector<double>>& class_state);
private:
    std::string path_;
    std::vector<std::string> class_names_, state_names_;
    std::ofstream out_;
};

}  // namespace cw::train
