#pragma once
// The MNIST network of Wong et al. 2020 (fast_adversarial, MNIST/mnist_net; docs/protocols/training.md §2.2):
// conv4x4(1->16, s2, p1), ReLU, conv4x4(16->32, s2, p1), ReLU, flatten, FC(32*7*7 -> 100), ReLU, FC(100 -> C).
// The reference is a bare nn.Sequential, so its state-dict keys are the layer indices 0, 2, 5, 7.
#include "nn/models/classifier.h"

namespace cw::nn {

class MnistWong : public Classifier {
public:
    MnistWong(int64_t num_classes = 10, int64_t in_channels = 1, int64_t input_size = 28);
    bool has_features() const override { return true; }
protected:
    Tensor representation(const Tensor& x) override;
    Tensor classify(const Tensor& h) override;
private:
    std::shared_ptr<Conv2d> conv1_, conv2_;
    std::shared_ptr<Linear> fc1_, fc2_;
};

}  // namespace cw::nn
