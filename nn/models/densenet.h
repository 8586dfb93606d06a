#pragma once
// DenseNet-121 / 169 for CIFAR (kuangliu/pytorch-cifar models/densenet.py): growth rate 32, reduction 0.5,
// stem conv3x3(2*growth), four dense stages joined by transitions (BN-ReLU-conv1x1-avgpool 2), final BN-ReLU,
// average pool, linear. PyTorch names: conv1, denseK.N.{bn1,conv1,bn2,conv2}, transK.{bn,conv}, bn, linear.
// The reference pools 4x4 (global at 32x32); we average globally at every input size.
#include "nn/models/classifier.h"

namespace cw::nn {

// BN-ReLU-conv1x1(4*growth)-BN-ReLU-conv3x3(growth); output concat([new features, x]) along channels
// (new features first, as the reference).
class DenseBottleneck : public Module {
public:
    DenseBottleneck(int64_t in, int64_t growth);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<BatchNorm2d> bn1_, bn2_;
    std::shared_ptr<Conv2d> conv1_, conv2_;
};

// BN-ReLU-conv1x1-avgpool 2.
class DenseTransition : public Module {
public:
    DenseTransition(int64_t in, int64_t out);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<BatchNorm2d> bn_;
    std::shared_ptr<Conv2d> conv_;
};

class DenseNet : public Classifier {
public:
    // {6,12,24,16} = DenseNet-121, {6,12,32,32} = DenseNet-169
    DenseNet(std::vector<int> blocks, int64_t growth = 32, int64_t num_classes = 10, int64_t in_channels = 3,
             int64_t input_size = 32);
protected:
    Tensor logits(const Tensor& x) override;
private:
    std::shared_ptr<Conv2d> conv1_;
    std::vector<std::shared_ptr<Module>> stages_;  // dense1, trans1, ..., dense4
    std::shared_ptr<BatchNorm2d> bn_;
    std::shared_ptr<Linear> linear_;
};

}  // namespace cw::nn
