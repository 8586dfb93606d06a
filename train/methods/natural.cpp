#include "train/methods/natural.h"

#include "train/methods/method_util.h"

namespace cw::train {

std::string Natural::describe() const {
    return std::string("natural: mean CE on clean images (no attack); clean forward after step: ") +
           clean_forward_name(clean_forward_);
}

BatchLoss Natural::batch_loss(const BatchInput& in) {
    const Tensor logits = in.model(in.images);
    return {per_sample_mean_ce(logits, in.labels), logits.detach()};
}

}  // namespace cw::train
