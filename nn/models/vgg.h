#pragma once
// VGG-16 / VGG-19 with batch norm, CIFAR style (kuangliu/pytorch-cifar models/vgg.py): per number in the
// configuration conv3x3 (bias) + BN + ReLU, per 'M' maxpool 2, then AvgPool2d(1) (an identity), flatten and
// classifier = Linear(512, C). PyTorch names: features.N (N = position in that layer list), classifier.
// Other input sizes: the five pools leave a 1x1 map at 32; at 64 the 2x2 map is averaged globally (keeps
// Linear(512, C)); at 28 the fifth pool would shrink the 1x1 map to 0x0 and is replaced by an identity, so the
// layer indices, and hence the state-dict keys, stay those of the reference.
#include <string>

#include "nn/models/classifier.h"

namespace cw::nn {

class VGG : public Classifier {
public:
    // depth 16 or 19
    VGG(int depth, int64_t num_classes = 10, int64_t in_channels = 3, int64_t input_size = 32);
protected:
    Tensor logits(const Tensor& x) override;
private:
    std::shared_ptr<Sequential> features_;
    std::shared_ptr<Linear> classifier_;
};

}  // namespace cw::nn
