#pragma once
// The DeepMind-style PreAct ResNet-18/34 (Rebuffi et al. 2021; RobustBench's dm_wide_resnet.py, DMPreActResNet).
// Beside the PreAct ResNet of preact_resnet.h it has the DeepMind WideResNet's rules (dm_wide_resnet.h): SiLU or
// ReLU, the mean and std inside the model, stride-2 convolutions on an input padded below and to the right only;
// and a shortcut of its own: where stride or width changes, a 3x3 convolution (not 1x1) of the raw block input
// (not of the activated one), padded like the first convolution. No shortcut otherwise.
// PyTorch names: conv_2d, layer_S.B.{batchnorm_0, conv_2d_1, batchnorm_1, conv_2d_2, shortcut}, batchnorm, logits.
#include "nn/models/dm_wide_resnet.h"

namespace cw::nn {

class DMPreActBlock : public Module {
public:
    DMPreActBlock(int64_t in, int64_t out, int64_t stride, Activation act);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<BatchNorm2d> bn0_, bn1_;
    std::shared_ptr<Conv2d> conv1_, conv2_, shortcut_;
    int64_t stride_;
    Activation act_;
};

class DMPreActResNet : public Classifier {
public:
    // depth 18 (2,2,2,2 blocks) or 34 (3,4,6,3); stage widths w, 2w, 4w, 8w with w = base_width (64 in the
    // reference; a smaller w builds the same network narrower).
    DMPreActResNet(int depth, int64_t num_classes = 10, int64_t in_channels = 3, int64_t input_size = 32,
                   Activation act = Activation::Silu, int64_t base_width = 64);
    bool has_features() const override { return true; }
protected:
    Tensor representation(const Tensor& x) override;
    Tensor classify(const Tensor& h) override;
private:
    std::shared_ptr<Conv2d> conv_;
    std::vector<std::shared_ptr<Sequential>> layers_;
    std::shared_ptr<BatchNorm2d> bn_;
    std::shared_ptr<Linear> logits_;
    Activation act_;
};

}  // namespace cw::nn
