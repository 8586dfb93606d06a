#pragma once
// ResNet-18/34/50 for CIFAR (kuangliu/pytorch-cifar models/resnet.py; used by TRADES/WAT/FRL preliminaries):
// stem conv3x3(64, stride 1) + BN + ReLU (no stem pooling), four stages of post-activation blocks with widths
// 64..512 (stride 2 at the first block of stages 2-4), average pool, linear. PyTorch names: conv1, bn1,
// layerX.Y.conv1/bn1/conv2/bn2(/conv3/bn3), layerX.Y.shortcut.0 (1x1 conv) / .1 (BN), linear.
// The reference pools 4x4 (a global average at 32x32); we average globally at every input size.
#include "nn/models/classifier.h"

namespace cw::nn {

// conv3x3-BN-ReLU-conv3x3-BN, + shortcut, ReLU. Expansion 1.
class BasicBlock : public Module {
public:
    BasicBlock(int64_t in, int64_t planes, int64_t stride);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<Conv2d> conv1_, conv2_;
    std::shared_ptr<BatchNorm2d> bn1_, bn2_;
    std::shared_ptr<Sequential> shortcut_;  // conv1x1 + BN where stride or width changes, else identity
};

// conv1x1-BN-ReLU-conv3x3(stride)-BN-ReLU-conv1x1(4x)-BN, + shortcut, ReLU. Expansion 4.
class Bottleneck : public Module {
public:
    Bottleneck(int64_t in, int64_t planes, int64_t stride);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<Conv2d> conv1_, conv2_, conv3_;
    std::shared_ptr<BatchNorm2d> bn1_, bn2_, bn3_;
    std::shared_ptr<Sequential> shortcut_;
};

class ResNet : public Classifier {
public:
    enum class Block { Basic, Bottleneck };
    // {2,2,2,2} Basic = ResNet-18, {3,4,6,3} Basic = ResNet-34, {3,4,6,3} Bottleneck = ResNet-50
    // base_width: the first stage's width (64; stages w, 2w, 4w, 8w times the expansion); a smaller one builds
    // the same network narrower (the PyTorch twins of tests/fixtures/robustbench).
    ResNet(Block block, std::vector<int> blocks, int64_t num_classes = 10, int64_t in_channels = 3,
           int64_t input_size = 32, int64_t base_width = 64);
    bool has_features() const override { return true; }
protected:
    Tensor representation(const Tensor& x) override;
    Tensor classify(const Tensor& h) override;
private:
    std::shared_ptr<Conv2d> conv1_;
    std::shared_ptr<BatchNorm2d> bn1_;
    std::vector<std::shared_ptr<Sequential>> layers_;
    std::shared_ptr<Linear> linear_;
};

}  // namespace cw::nn
