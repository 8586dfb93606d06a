#pragma once
// The TRADES MNIST SmallCNN (training.md §2.2): conv3x3-32, conv3x3-32, maxpool, conv3x3-64, conv3x3-64, maxpool,
// fc-200, dropout 0.5, fc-200, fc-10, ReLUs; convs without padding. PyTorch names: feature_extractor.{0,2,5,7},
// classifier.{0,3,5}.
#include "nn/layers.h"

namespace cw::nn {

class SmallCNN : public Module {
public:
    SmallCNN(int64_t num_classes = 10, int64_t in_channels = 1, int64_t input_size = 28, float drop = 0.5f);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<Sequential> features_, classifier_;
};

}  // namespace cw::nn
