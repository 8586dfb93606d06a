#pragma once
// The DeepMind-style WideResNet (Gowal et al. 2020, Rebuffi et al. 2021; RobustBench's dm_wide_resnet.py, which
// most of the top CIFAR-10/100 L-inf and L2 entries use at depth 28, 70, 106 and width 10 or 16). It differs from
// the plain WideResNet (wide_resnet.h) in three ways a converted checkpoint depends on:
//   * the activation is SiLU ("Swish") or ReLU (activation.h);
//   * a stride-2 convolution pads its input by one zero row below and one zero column to the right, never above or
//     to the left (TensorFlow's "SAME"), so its 3x3 windows start at even rows and columns;
//   * the mean and std are part of the model (ModelConfig's normalisation; no state-dict entries).
// PyTorch names: init_conv, layer.G.block.B.{batchnorm_0, conv_0, batchnorm_1, conv_1, shortcut}, batchnorm,
// logits. Shortcut rule as the plain WideResNet: a 1x1 convolution of the activated input where the width
// changes, else the raw input.
#include "nn/models/activation.h"
#include "nn/models/classifier.h"

namespace cw::nn {

// x padded with one zero row at the bottom and one zero column at the right ([N,C,H,W] -> [N,C,H+1,W+1]).
Tensor pad_bottom_right(const Tensor& x);
// act(bn(x)); ReLU as the fused batch_norm_relu op.
Tensor bn_activate(BatchNorm2d& bn, Activation act, const Tensor& x);

class DMWideBlock : public Module {
public:
    DMWideBlock(int64_t in, int64_t out, int64_t stride, Activation act);
    Tensor forward(const Tensor& x) override;
private:
    std::shared_ptr<BatchNorm2d> bn0_, bn1_;
    std::shared_ptr<Conv2d> conv0_, conv1_, shortcut_;
    int64_t stride_;
    Activation act_;
};

class DMWideResNet : public Classifier {
public:
    // depth = 6n + 4; widths 16, 16w, 32w, 64w as the plain WideResNet.
    DMWideResNet(int depth, int widen, int64_t num_classes = 10, int64_t in_channels = 3, int64_t input_size = 32,
                 Activation act = Activation::Silu);
    bool has_features() const override { return true; }
protected:
    Tensor representation(const Tensor& x) override;
    Tensor classify(const Tensor& h) override;
private:
    std::shared_ptr<Conv2d> init_conv_;
    std::shared_ptr<Sequential> layer_;
    std::shared_ptr<BatchNorm2d> bn_;
    std::shared_ptr<Linear> logits_;
    Activation act_;
};

}  // namespace cw::nn
