#include "nn/models/dm_wide_resnet.h"

namespace cw::nn {

namespace {
// The reference's _BlockGroup: a module whose only child is the Sequential "block".
class DMBlockGroup : public Module {
public:
    DMBlockGroup(int n, int64_t in, int64_t out, int64_t stride, Activation act) : Module("DMBlockGroup") {
        block_ = register_module("block", std::make_shared<Sequential>());
        for (int i = 0; i < n; ++i) block_->add(std::make_shared<DMWideBlock>(i == 0 ? in : out, out, i == 0 ? stride : 1, act));
    }
    Tensor forward(const Tensor& x) override { return block_->forward(x); }
private:
    std::shared_ptr<Sequential> block_;
};
}  // namespace

Tensor bn_activate(BatchNorm2d& bn, Activation act, const Tensor& x) {
    return act == Activation::Relu ? bn.forward_relu(x) : silu(bn.forward(x));
}

Tensor pad_bottom_right(const Tensor& x) {
    if (x.ndim() != 4) throw ShapeError("pad_bottom_right: expected [N,C,H,W], got " + shape_str(x.shape()));
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    Tensor wider = concat({x, Tensor::zeros({n, c, h, 1}, DType::F32, x.device())}, 3);
    return concat({wider, Tensor::zeros({n, c, 1, w + 1}, DType::F32, x.device())}, 2);
}

DMWideBlock::DMWideBlock(int64_t in, int64_t out, int64_t stride, Activation act)
    : Module("DMWideBlock"), stride_(stride), act_(act) {
    if (stride != 1 && stride != 2) throw Error("DMWideBlock: stride must be 1 or 2, got " + std::to_string(stride));
    bn0_ = register_module("batchnorm_0", std::make_shared<BatchNorm2d>(in));
    // padding 0 at stride 2: forward pads the input itself (pad_bottom_right)
    conv0_ = register_module("conv_0", std::make_shared<Conv2d>(in, out, 3, stride, stride == 1 ? 1 : 0, false));
    bn1_ = register_module("batchnorm_1", std::make_shared<BatchNorm2d>(out));
    conv1_ = register_module("conv_1", std::make_shared<Conv2d>(out, out, 3, 1, 1, false));
    if (in != out) shortcut_ = register_module("shortcut", std::make_shared<Conv2d>(in, out, 1, stride, 0, false));
}

Tensor DMWideBlock::forward(const Tensor& x) {
    Tensor a = bn_activate(*bn0_, act_, x);
    Tensor h = conv0_->forward(stride_ == 2 ? pad_bottom_right(a) : a);
    h = conv1_->forward(bn_activate(*bn1_, act_, h));
    return add(shortcut_ ? shortcut_->forward(a) : x, h);
}

DMWideResNet::DMWideResNet(int depth, int widen, int64_t num_classes, int64_t in_channels, int64_t input_size,
                           Activation act)
    : Classifier("DMWideResNet"), act_(act) {
    if (depth < 10 || (depth - 4) % 6 != 0)
        throw Error("DMWideResNet: depth must be 6n+4 (28, 70, ...), got " + std::to_string(depth));
    require_positive_side(input_size, input_size, "DMWideResNet");
    const int n = (depth - 4) / 6;
    const int64_t w1 = 16 * widen, w2 = 32 * widen, w3 = 64 * widen;
    init_conv_ = register_module("init_conv", std::make_shared<Conv2d>(in_channels, 16, 3, 1, 1, false));
    layer_ = register_module("layer", std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
                                          std::make_shared<DMBlockGroup>(n, 16, w1, 1, act),
                                          std::make_shared<DMBlockGroup>(n, w1, w2, 2, act),
                                          std::make_shared<DMBlockGroup>(n, w2, w3, 2, act)}));
    bn_ = register_module("batchnorm", std::make_shared<BatchNorm2d>(w3));
    logits_ = register_module("logits", std::make_shared<Linear>(w3, num_classes));
    // PyTorch's default initialisation (the reference sets none); weights are meant to come from a checkpoint.
}

Tensor DMWideResNet::representation(const Tensor& x) {
    // the reference pools 8x8, a global average at 32x32; we average globally at every input size
    return global_avg_pool2d(bn_activate(*bn_, act_, layer_->forward(init_conv_->forward(x))));
}

Tensor DMWideResNet::classify(const Tensor& h) { return logits_->forward(h); }

}  // namespace cw::nn
