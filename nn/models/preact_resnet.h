#pragma once
// PreAct ResNet-18 (He et al. 2016, the Rice / CFA / FAIR-TAT version; docs/protocols/training.md §2.1).
#include "nn/models/classifier.h"

namespace cw::nn {

// Public checkpoints take the 1x1 projection shortcut either from the activated input relu(bn1(x)) (Rice,
// kuangliu, CFA, FAIR-TAT — our default) or from the raw block input x.
enum class PreActShortcut { FromActivation, FromInput };

class PreActBlock : public Module {
public:
    PreActBlock(int64_t in, int64_t out, int64_t stride, PreActShortcut variant);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<BatchNorm2d> bn1_, bn2_;
    std::shared_ptr<Conv2d> conv1_, conv2_;
    std::shared_ptr<Sequential> shortcut_;  // "shortcut.0" = 1x1 conv, only where stride or width changes
    PreActShortcut variant_;
};

// final_bn = false: FRL's pre_resnet.py, which has no BN + ReLU before the pooling (docs/protocols/training.md §2.1).
// The reference 4x4 average pool is a global average at 32x32; we pool globally at every input size (28: 4x4
// map, 64: 8x8 map), so the classifier is always Linear(512, C).
class PreActResNet : public Classifier {
public:
    // blocks per stage, e.g. {2,2,2,2} for PreAct ResNet-18; input_size 32 (CIFAR), 64 (TinyImageNet), 28.
    // base_width: the first stage's width (64; stages w, 2w, 4w, 8w); a smaller one builds the same network
    // narrower (the PyTorch twins of tests/fixtures/robustbench).
    PreActResNet(std::vector<int> blocks, int64_t num_classes, int64_t in_channels = 3, int64_t input_size = 32,
                 PreActShortcut variant = PreActShortcut::FromActivation, bool final_bn = true,
                 int64_t base_width = 64);
    bool has_features() const override { return true; }
protected:
    Tensor representation(const Tensor& x) override;
    Tensor classify(const Tensor& h) override;
private:
    std::shared_ptr<Conv2d> conv1_;
    std::vector<std::shared_ptr<Sequential>> layers_;
    std::shared_ptr<BatchNorm2d> bn_;
    std::shared_ptr<Linear> linear_;
};

}  // namespace cw::nn
