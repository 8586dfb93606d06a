#pragma once
// The TRADES MNIST SmallCNN (docs/protocols/training.md §2.2, TRADES models/small_cnn.py): conv3x3-32, conv3x3-32, maxpool,
// conv3x3-64, conv3x3-64, maxpool, fc-200, dropout 0.5, fc-200, fc-C, ReLUs; convs without padding.
// TRADES builds its Sequentials from OrderedDicts, so the PyTorch names are feature_extractor.conv1..conv4 and
// classifier.fc1..fc3.
#include "nn/models/classifier.h"

namespace cw::nn {

class SmallCNN : public Classifier {
public:
    SmallCNN(int64_t num_classes = 10, int64_t in_channels = 1, int64_t input_size = 28, float drop = 0.5f);
    bool has_features() const override { return true; }
protected:
    Tensor representation(const Tensor& x) override;
    Tensor classify(const Tensor& h) override;
private:
    std::shared_ptr<Sequential> features_, classifier_;
};

}  // namespace cw::nn
