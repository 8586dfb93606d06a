#pragma once
// The GTSRB network for FRL experiments. FRL only says "4-layer CNN", so this is our choice (docs/protocols/training.md §2.2):
// conv3x3 32, ReLU, conv3x3 64, ReLU, maxpool 2, conv3x3 128, ReLU, conv3x3 128, ReLU, maxpool 2 (padding 1,
// with bias), flatten, FC(128*(S/4)^2 -> C). PyTorch names: features.{0,2,5,7}, classifier.
#include "nn/models/classifier.h"

namespace cw::nn {

class GtsrbCnn : public Classifier {
public:
    GtsrbCnn(int64_t num_classes = 43, int64_t in_channels = 3, int64_t input_size = 32);
protected:
    Tensor logits(const Tensor& x) override;
private:
    std::shared_ptr<Sequential> features_;
    std::shared_ptr<Linear> classifier_;
};

}  // namespace cw::nn
