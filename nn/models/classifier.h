#pragma once
// Classifier: the base of every model in the zoo. forward() takes images in [0,1] (attacks work in pixel
// space) and applies the optional per-channel normalisation before the network proper, so that the
// normalisation is part of the model, as in Rice / CFA / FAIR-TAT. Normalize has no state-dict entries, so a
// normalised and an unnormalised model load the same checkpoints.
#include <memory>
#include <vector>

#include "nn/layers.h"

namespace cw::nn {

class Classifier : public Module {
public:
    Tensor forward(const Tensor& x) final { return logits(normalize_ ? normalize_->forward(x) : x); }
    // Empty vectors remove the normalisation.
    void set_normalization(std::vector<float> mean, std::vector<float> std) {
        normalize_ = mean.empty() && std.empty() ? nullptr
                                                 : std::make_shared<Normalize>(std::move(mean), std::move(std));
    }
    const Normalize* normalization() const { return normalize_.get(); }

protected:
    using Module::Module;
    // The network on already-normalised input.
    virtual Tensor logits(const Tensor& x) = 0;

private:
    std::shared_ptr<Normalize> normalize_;  // not registered: no state, device handled lazily by Normalize
};

// "<what>: input size N is too small ..." when a spatial size reaches 0.
void require_positive_side(int64_t side, int64_t input_size, const char* model);

}  // namespace cw::nn
