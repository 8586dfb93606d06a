#pragma once
// The model as an attack sees it. The gradient attacks work on device tensors: logits, the per-sample objective
// (one kernel, engine/attack_ops.h) and the input gradient of its sum stay on the model's device, so a step costs
// no host copy (docs/protocols/attacks.md §0: the loss is a sum of per-sample losses, so sample i's gradient depends on sample i
// only — except through BatchNorm in train mode). Gradient passes run inside InputGradOnlyGuard: parameters never
// receive gradients. The host-side checks use the Images form of forward, which copies once per call.
#include <cstdint>
#include <vector>

#include "attacks/images.h"
#include "engine/attack_ops.h"
#include "nn/module.h"

namespace cw::attacks {

// What an attack maximises, per sample: the objective kind with its labels (and targets) on the model's device.
struct Objective {
    AttackObjective kind = AttackObjective::CrossEntropy;
    Tensor labels;    // int32 [n]
    Tensor targets;   // int32 [n], for the targeted kinds
    float kappa = 0;  // CW confidence
};

// One pass of the model at a batch of points, on the device.
struct Evaluation {
    Tensor logits;          // [n, C]
    ObjectiveValues obj;    // value, wrong, on_target [n]
    Tensor grad;            // d Σ_i value_i / d x, [n, ...] (value_and_grad only)
};

// Host copies, for the host-side attacks.
struct ModelOutput {
    int64_t n = 0, classes = 0;
    std::vector<float> logits;        // [n, classes]

    const float* row(int64_t i) const { return logits.data() + i * classes; }
    int32_t pred(int64_t i) const;
    std::vector<int32_t> preds() const;
};

class ModelOracle {
public:
    ModelOracle(nn::Module& model, Device device) : model_(model), device_(device) {}

    Tensor logits(const Tensor& x);                                    // no gradient (NoGradGuard)
    Evaluation evaluate(const Tensor& x, const Objective& J);          // no gradient
    Evaluation value_and_grad(const Tensor& x, const Objective& J);    // one forward + one input-gradient pass
    // argmax f(x) on the host (one copy).
    std::vector<int32_t> predict(const Tensor& x);
    // The model's number of classes, from one eval-mode forward of x's first sample (no BN statistics move),
    // remembered after the first call.
    int64_t num_classes(const Tensor& x);

    ModelOutput forward(const Tensor& x);                              // host copy of the logits
    ModelOutput forward(const Images& x);                              // host images in, host logits out

    nn::Module& module() { return model_; }
    Device device() const { return device_; }
    // Samples pushed through the model so far (a batch of n counts n), for cost reports.
    int64_t sample_forwards() const { return sample_forwards_; }

private:
    nn::Module& model_;
    Device device_;
    int64_t sample_forwards_ = 0;
    int64_t classes_ = 0;
};

// Objectives with their labels and targets moved to `device`.
Objective make_objective(AttackObjective kind, const std::vector<int32_t>& labels, Device device,
                         const std::vector<int32_t>& targets = {}, float kappa = 0.f);

}  // namespace cw::attacks
