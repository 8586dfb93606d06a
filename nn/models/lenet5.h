#pragma once
// LeNet-5 as in kuangliu/pytorch-cifar models/lenet.py: conv5x5-6, ReLU, maxpool 2, conv5x5-16, ReLU,
// maxpool 2, FC-120, ReLU, FC-84, ReLU, FC-C. PyTorch names conv1, conv2, fc1, fc2, fc3.
// 28x28 inputs (MNIST) get padding 2 on conv1, as in LeCun's original, so fc1 sees 16*5*5 at 28 and 32;
// other sizes flatten whatever map remains (64 -> 16*13*13).
#include "nn/models/classifier.h"

namespace cw::nn {

class LeNet5 : public Classifier {
public:
    LeNet5(int64_t num_classes = 10, int64_t in_channels = 3, int64_t input_size = 32);
    bool has_features() const override { return true; }
protected:
    Tensor representation(const Tensor& x) override;
    Tensor classify(const Tensor& h) override;
private:
    std::shared_ptr<Conv2d> conv1_, conv2_;
    std::shared_ptr<Linear> fc1_, fc2_, fc3_;
};

}  // namespace cw::nn
