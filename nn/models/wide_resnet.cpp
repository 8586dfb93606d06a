#include "nn/models/wide_resnet.h"

#include "nn/init.h"

namespace cw::nn {

namespace {
// The reference's NetworkBlock: a module whose only child is the Sequential "layer".
class NetworkBlock : public Module {
public:
    NetworkBlock(int n, int64_t in, int64_t out, int64_t stride, float drop_rate) : Module("NetworkBlock") {
        layer_ = register_module("layer", std::make_shared<Sequential>());
        for (int i = 0; i < n; ++i)
            layer_->add(std::make_shared<WideBlock>(i == 0 ? in : out, out, i == 0 ? stride : 1, drop_rate));
    }
    Tensor forward(const Tensor& x) override { return layer_->forward(x); }
private:
    std::shared_ptr<Sequential> layer_;
};
}  // namespace

WideBlock::WideBlock(int64_t in, int64_t out, int64_t stride, float drop_rate)
    : Module("WideBlock"), drop_rate_(drop_rate) {
    bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(in));
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in, out, 3, stride, 1, false));
    bn2_ = register_module("bn2", std::make_shared<BatchNorm2d>(out));
    conv2_ = register_module("conv2", std::make_shared<Conv2d>(out, out, 3, 1, 1, false));
    if (in != out) shortcut_ = register_module("convShortcut", std::make_shared<Conv2d>(in, out, 1, stride, 0, false));
}

Tensor WideBlock::forward(const Tensor& x) {
    Tensor a = bn1_->forward_relu(x);
    Tensor h = bn2_->forward_relu(conv1_->forward(a));
    if (drop_rate_ > 0.f) h = dropout(h, drop_rate_, is_training(), global_rng());
    h = conv2_->forward(h);
    return add(h, shortcut_ ? shortcut_->forward(a) : x);
}

WideResNet::WideResNet(int depth, int widen, int64_t num_classes, int64_t in_channels, int64_t input_size,
                       bool sub_block1, float drop_rate)
    : Classifier("WideResNet") {
    if (depth < 10 || (depth - 4) % 6 != 0) throw Error("WideResNet: depth must be 6n+4 (28, 34, ...), got " + std::to_string(depth));
    require_positive_side(input_size, input_size, "WideResNet");
    const int n = (depth - 4) / 6;
    const int64_t w1 = 16 * widen, w2 = 32 * widen, w3 = 64 * widen;
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in_channels, 16, 3, 1, 1, false));
    block1_ = register_module("block1", std::make_shared<NetworkBlock>(n, 16, w1, 1, drop_rate));
    if (sub_block1) register_module("sub_block1", std::make_shared<NetworkBlock>(n, 16, w1, 1, drop_rate));
    block2_ = register_module("block2", std::make_shared<NetworkBlock>(n, w1, w2, 2, drop_rate));
    block3_ = register_module("block3", std::make_shared<NetworkBlock>(n, w2, w3, 2, drop_rate));
    bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(w3));
    fc_ = register_module("fc", std::make_shared<Linear>(w3, num_classes));

    // every 4-d parameter is a conv weight; BN already starts at (1, 0)
    for (auto& p : named_parameters())
        if (p.tensor->ndim() == 4) init::kaiming_normal_(*p.tensor, init::Fan::Out);
    fc_->bias->zero_();
}

Tensor WideResNet::representation(const Tensor& x) {
    Tensor h = block3_->forward(block2_->forward(block1_->forward(conv1_->forward(x))));
    return global_avg_pool2d(bn1_->forward_relu(h));
}

Tensor WideResNet::classify(const Tensor& h) { return fc_->forward(h); }

}  // namespace cw::nn
