#pragma once
// GoogLeNet for CIFAR (kuangliu/pytorch-cifar models/googlenet.py): stem pre_layers = conv3x3(192)+BN+ReLU
// (no stem pooling), inception a3, b3, maxpool(3, s2, p1), a4..e4, maxpool, a5, b5, average pool, linear(1024, C).
// Each inception module concatenates four branches: b1 1x1; b2 1x1 -> 3x3; b3 1x1 -> 3x3 -> 3x3 (the "5x5");
// b4 maxpool(3, s1, p1) -> 1x1; every conv has a bias and is followed by BN + ReLU. PyTorch names:
// pre_layers.{0,1}, a3.b1.{0,1}, a3.b2.{0,1,3,4}, a3.b3.{0,1,3,4,6,7}, a3.b4.{1,2}, ..., linear.
// The reference pools 8x8 (global at 32x32); we average globally at every input size.
#include "nn/models/classifier.h"

namespace cw::nn {

class Inception : public Module {
public:
    Inception(int64_t in, int64_t n1x1, int64_t n3x3_reduce, int64_t n3x3, int64_t n5x5_reduce, int64_t n5x5,
              int64_t pool_planes);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<Sequential> b1_, b2_, b3_, b4_;
};

class GoogLeNet : public Classifier {
public:
    GoogLeNet(int64_t num_classes = 10, int64_t in_channels = 3, int64_t input_size = 32);
protected:
    Tensor logits(const Tensor& x) override;
private:
    std::shared_ptr<Sequential> pre_layers_;
    std::shared_ptr<Inception> a3_, b3_, a4_, b4_, c4_, d4_, e4_, a5_, b5_;
    std::shared_ptr<Linear> linear_;
};

}  // namespace cw::nn
