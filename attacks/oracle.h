#pragma once
// The model as an attack sees it: logits for a host batch, or per-sample objective values plus the input gradient
// of their sum (attacks.md §0: the loss is a sum of per-sample losses, so sample i's gradient depends on sample i
// only — except through BatchNorm in train mode). Images travel to the model's device for the forward pass and
// back; gradient passes run inside InputGradOnlyGuard, so parameters never receive gradients.
#include <cstdint>
#include <functional>
#include <vector>

#include "attacks/images.h"
#include "nn/module.h"

namespace cw::attacks {

// Per-sample objective: value of row i of the logits z (C of them); writes dvalue/dz into dz (C floats, zeroed).
using Objective = std::function<float(int64_t i, const float* z, int64_t C, float* dz)>;

struct ModelOutput {
    int64_t n = 0, classes = 0;
    std::vector<float> logits;        // [n, classes]
    std::vector<float> value;         // objective per sample (empty for a plain forward)
    Images grad;                      // d Σ_i value_i / d x (empty for a plain forward)

    const float* row(int64_t i) const { return logits.data() + i * classes; }
    int32_t pred(int64_t i) const;
    std::vector<int32_t> preds() const;
};

class ModelOracle {
public:
    ModelOracle(nn::Module& model, Device device) : model_(model), device_(device) {}

    ModelOutput forward(const Images& x);                              // no gradient (NoGradGuard)
    ModelOutput value_and_grad(const Images& x, const Objective& J);   // one forward + one input-gradient pass

    nn::Module& module() { return model_; }
    Device device() const { return device_; }
    // Samples pushed through the model so far (a batch of n counts n), for cost reports.
    int64_t sample_forwards() const { return sample_forwards_; }

private:
    nn::Module& model_;
    Device device_;
    int64_t sample_forwards_ = 0;
};

}  // namespace cw::attacks
