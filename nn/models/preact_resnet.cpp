#include "nn/models/preact_resnet.h"

namespace cw::nn {

PreActBlock::PreActBlock(int64_t in, int64_t out, int64_t stride, PreActShortcut variant)
    : Module("PreActBlock"), variant_(variant) {
    bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(in));
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in, out, 3, stride, 1, false));
    bn2_ = register_module("bn2", std::make_shared<BatchNorm2d>(out));
    conv2_ = register_module("conv2", std::make_shared<Conv2d>(out, out, 3, 1, 1, false));
    if (stride != 1 || in != out)
        shortcut_ = register_module("shortcut", std::make_shared<Sequential>(
                                                    std::initializer_list<ModulePtr>{std::make_shared<Conv2d>(in, out, 1, stride, 0, false)}));
}

Tensor PreActBlock::forward(const Tensor& x) {
    Tensor a = bn1_->forward_relu(x);
    Tensor skip = x;
    if (shortcut_) skip = shortcut_->forward(variant_ == PreActShortcut::FromActivation ? a : x);
    Tensor h = conv1_->forward(a);
    h = conv2_->forward(bn2_->forward_relu(h));
    return add(h, skip);
}

PreActResNet::PreActResNet(std::vector<int> blocks, int64_t num_classes, int64_t in_channels, int64_t input_size,
                           PreActShortcut variant, bool final_bn, int64_t base_width)
    : Classifier("PreActResNet") {
    if (base_width < 1) throw Error("PreActResNet: base width must be positive");
    if (blocks.size() != 4) throw Error("PreActResNet: expected 4 stages");
    // three stride-2 stages: ceil(ceil(ceil(S/2)/2)/2) >= 1 for any S >= 1
    require_positive_side(input_size, input_size, "PreActResNet");
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in_channels, base_width, 3, 1, 1, false));
    const int64_t widths[4] = {base_width, 2 * base_width, 4 * base_width, 8 * base_width};
    int64_t in = base_width;
    for (int s = 0; s < 4; ++s) {
        auto stage = std::make_shared<Sequential>();
        for (int b = 0; b < blocks[s]; ++b) {
            const int64_t stride = (s > 0 && b == 0) ? 2 : 1;
            stage->add(std::make_shared<PreActBlock>(in, widths[s], stride, variant));
            in = widths[s];
        }
        layers_.push_back(register_module("layer" + std::to_string(s + 1), stage));
    }
    if (final_bn) bn_ = register_module("bn", std::make_shared<BatchNorm2d>(in));
    linear_ = register_module("linear", std::make_shared<Linear>(in, num_classes));
}

Tensor PreActResNet::representation(const Tensor& x) {
    Tensor h = conv1_->forward(x);
    for (auto& stage : layers_) h = stage->forward(h);
    if (bn_) h = bn_->forward_relu(h);
    // avg-pool 4x4 at 32x32 input == global average over the final map for every input size we build
    return global_avg_pool2d(h);
}

Tensor PreActResNet::classify(const Tensor& h) { return linear_->forward(h); }

}  // namespace cw::nn
