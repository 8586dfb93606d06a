#include "nn/models/densenet.h"

namespace cw::nn {

DenseBottleneck::DenseBottleneck(int64_t in, int64_t growth) : Module("DenseBottleneck") {
    bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(in));
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in, 4 * growth, 1, 1, 0, false));
    bn2_ = register_module("bn2", std::make_shared<BatchNorm2d>(4 * growth));
    conv2_ = register_module("conv2", std::make_shared<Conv2d>(4 * growth, growth, 3, 1, 1, false));
}

Tensor DenseBottleneck::forward(const Tensor& x) {
    Tensor h = conv1_->forward(bn1_->forward_relu(x));
    h = conv2_->forward(bn2_->forward_relu(h));
    return concat({h, x}, 1);
}

DenseTransition::DenseTransition(int64_t in, int64_t out) : Module("DenseTransition") {
    bn_ = register_module("bn", std::make_shared<BatchNorm2d>(in));
    conv_ = register_module("conv", std::make_shared<Conv2d>(in, out, 1, 1, 0, false));
}

Tensor DenseTransition::forward(const Tensor& x) { return avg_pool2d(conv_->forward(bn_->forward_relu(x)), 2); }

DenseNet::DenseNet(std::vector<int> blocks, int64_t growth, int64_t num_classes, int64_t in_channels, int64_t input_size)
    : Classifier("DenseNet") {
    if (blocks.size() != 4) throw Error("DenseNet: expected 4 dense stages");
    require_positive_side(input_size / 8, input_size, "DenseNet");  // three transitions halve the side (floor)
    int64_t channels = 2 * growth;
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in_channels, channels, 3, 1, 1, false));
    for (int s = 0; s < 4; ++s) {
        auto dense = std::make_shared<Sequential>();
        for (int b = 0; b < blocks[s]; ++b) {
            dense->add(std::make_shared<DenseBottleneck>(channels, growth));
            channels += growth;
        }
        stages_.push_back(register_module("dense" + std::to_string(s + 1), dense));
        if (s == 3) break;
        const int64_t reduced = channels / 2;  // floor(channels * 0.5)
        stages_.push_back(register_module("trans" + std::to_string(s + 1), std::make_shared<DenseTransition>(channels, reduced)));
        channels = reduced;
    }
    bn_ = register_module("bn", std::make_shared<BatchNorm2d>(channels));
    linear_ = register_module("linear", std::make_shared<Linear>(channels, num_classes));
}

Tensor DenseNet::logits(const Tensor& x) {
    Tensor h = conv1_->forward(x);
    for (auto& stage : stages_) h = stage->forward(h);
    return linear_->forward(global_avg_pool2d(bn_->forward_relu(h)));
}

}  // namespace cw::nn
