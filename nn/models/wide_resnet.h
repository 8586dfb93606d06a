#pragma once
// WideResNet-28-10 / 34-10 as in TRADES models/wideresnet.py and RobustBench's wide_resnet.py (the
// architecture of most public robust CIFAR checkpoints). PyTorch names: conv1,
// blockK.layer.N.{bn1, conv1, bn2, conv2, convShortcut}, bn1, fc (relu modules have no state).
// Initialisation as the reference: conv weights N(0, 2 / (k*k*out)), BN (1, 0), linear bias 0 (weight keeps
// PyTorch's default). The reference pools 8x8 (global at 32x32); we average globally at every input size.
#include "nn/models/classifier.h"

namespace cw::nn {

// Pre-activation block. When the width changes, relu(bn1(x)) feeds both the residual branch and the 1x1
// convShortcut; otherwise the residual branch sees relu(bn1(x)) and the shortcut is the raw x.
class WideBlock : public Module {
public:
    WideBlock(int64_t in, int64_t out, int64_t stride, float drop_rate = 0.f);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<BatchNorm2d> bn1_, bn2_;
    std::shared_ptr<Conv2d> conv1_, conv2_, shortcut_;
    float drop_rate_;
};

class WideResNet : public Classifier {
public:
    // depth = 6n + 4 (28 -> 4 blocks per group, 34 -> 5). sub_block1: TRADES' model also builds an unused
    // "sub_block1" group (in its state dict, never in forward); RobustBench builds it for TRADES checkpoints.
    WideResNet(int depth, int widen, int64_t num_classes = 10, int64_t in_channels = 3, int64_t input_size = 32,
               bool sub_block1 = false, float drop_rate = 0.f);
    bool has_features() const override { return true; }
protected:
    Tensor representation(const Tensor& x) override;
    Tensor classify(const Tensor& h) override;
private:
    std::shared_ptr<Conv2d> conv1_;
    std::shared_ptr<Module> block1_, block2_, block3_;
    std::shared_ptr<BatchNorm2d> bn1_;
    std::shared_ptr<Linear> fc_;
};

}  // namespace cw::nn
