#include "nn/models/dm_preact_resnet.h"

namespace cw::nn {

DMPreActBlock::DMPreActBlock(int64_t in, int64_t out, int64_t stride, Activation act)
    : Module("DMPreActBlock"), stride_(stride), act_(act) {
    if (stride != 1 && stride != 2) throw Error("DMPreActBlock: stride must be 1 or 2, got " + std::to_string(stride));
    const int64_t pad = stride == 1 ? 1 : 0;  // at stride 2 forward pads below and to the right itself
    bn0_ = register_module("batchnorm_0", std::make_shared<BatchNorm2d>(in));
    conv1_ = register_module("conv_2d_1", std::make_shared<Conv2d>(in, out, 3, stride, pad, false));
    bn1_ = register_module("batchnorm_1", std::make_shared<BatchNorm2d>(out));
    conv2_ = register_module("conv_2d_2", std::make_shared<Conv2d>(out, out, 3, 1, 1, false));
    if (stride != 1 || in != out)
        shortcut_ = register_module("shortcut", std::make_shared<Conv2d>(in, out, 3, stride, pad, false));
}

Tensor DMPreActBlock::forward(const Tensor& x) {
    auto padded = [&](const Tensor& t) { return stride_ == 2 ? pad_bottom_right(t) : t; };
    Tensor a = bn_activate(*bn0_, act_, x);
    Tensor skip = shortcut_ ? shortcut_->forward(padded(x)) : x;
    Tensor h = conv1_->forward(padded(a));
    h = conv2_->forward(bn_activate(*bn1_, act_, h));
    return add(h, skip);
}

DMPreActResNet::DMPreActResNet(int depth, int64_t num_classes, int64_t in_channels, int64_t input_size,
                               Activation act, int64_t base_width)
    : Classifier("DMPreActResNet"), act_(act) {
    std::vector<int> blocks;
    if (depth == 18) blocks = {2, 2, 2, 2};
    else if (depth == 34) blocks = {3, 4, 6, 3};
    else throw Error("DMPreActResNet: depth must be 18 or 34, got " + std::to_string(depth));
    if (base_width < 1) throw Error("DMPreActResNet: base width must be positive");
    require_positive_side(input_size, input_size, "DMPreActResNet");
    conv_ = register_module("conv_2d", std::make_shared<Conv2d>(in_channels, base_width, 3, 1, 1, false));
    int64_t in = base_width;
    for (int s = 0; s < 4; ++s) {
        const int64_t width = base_width << s;
        auto stage = std::make_shared<Sequential>();
        for (int b = 0; b < blocks[s]; ++b) {
            stage->add(std::make_shared<DMPreActBlock>(in, width, (s > 0 && b == 0) ? 2 : 1, act));
            in = width;
        }
        layers_.push_back(register_module("layer_" + std::to_string(s), stage));
    }
    bn_ = register_module("batchnorm", std::make_shared<BatchNorm2d>(in));
    logits_ = register_module("logits", std::make_shared<Linear>(in, num_classes));
}

Tensor DMPreActResNet::representation(const Tensor& x) {
    Tensor h = conv_->forward(x);
    for (auto& stage : layers_) h = stage->forward(h);
    // the reference pools 4x4, a global average at 32x32; we average globally at every input size
    return global_avg_pool2d(bn_activate(*bn_, act_, h));
}

Tensor DMPreActResNet::classify(const Tensor& h) { return logits_->forward(h); }

}  // namespace cw::nn
