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
    Tensor forward(const Tensor& x) final { return logits(normalized(x)); }
    // The representation g(x): the input of the final linear layer (Ilyas et al.'s penultimate layer), on images
    // in [0,1] through the same normalisation as forward(), so head(features(x)) == forward(x). Throws cw::Error
    // naming the architecture for a model that has no accessor (has_features() false).
    Tensor features(const Tensor& x) { return representation(normalized(x)); }
    // The final linear layer on a representation.
    Tensor head(const Tensor& h) { return classify(h); }
    virtual bool has_features() const { return false; }
    // Empty vectors remove the normalisation.
    void set_normalization(std::vector<float> mean, std::vector<float> std) {
        normalize_ = mean.empty() && std.empty() ? nullptr
                                                 : std::make_shared<Normalize>(std::move(mean), std::move(std));
    }
    const Normalize* normalization() const { return normalize_.get(); }

protected:
    using Module::Module;
    // The network on already-normalised input. A model with a representation accessor overrides representation()
    // and classify() instead, so that forward() and features() cannot drift apart.
    virtual Tensor logits(const Tensor& x) { return classify(representation(x)); }
    // Everything up to the final linear layer, on normalised input; the defaults throw (no accessor).
    virtual Tensor representation(const Tensor& x);
    virtual Tensor classify(const Tensor& h);

    Tensor normalized(const Tensor& x) { return normalize_ ? normalize_->forward(x) : x; }

private:
    std::shared_ptr<Normalize> normalize_;  // not registered: no state, device handled lazily by Normalize
};

// "<what>: input size N is too small ..." when a spatial size reaches 0.
void require_positive_side(int64_t side, int64_t input_size, const char* model);

}  // namespace cw::nn
