#include "nn/models/resnet.h"

namespace cw::nn {

namespace {
// kuangliu's shortcut: an empty Sequential (identity) unless the shape changes.
std::shared_ptr<Sequential> projection(int64_t in, int64_t out, int64_t stride) {
    if (stride == 1 && in == out) return nullptr;
    return std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
        std::make_shared<Conv2d>(in, out, 1, stride, 0, false), std::make_shared<BatchNorm2d>(out)});
}
}  // namespace

BasicBlock::BasicBlock(int64_t in, int64_t planes, int64_t stride) : Module("BasicBlock") {
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in, planes, 3, stride, 1, false));
    bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(planes));
    conv2_ = register_module("conv2", std::make_shared<Conv2d>(planes, planes, 3, 1, 1, false));
    bn2_ = register_module("bn2", std::make_shared<BatchNorm2d>(planes));
    if (auto p = projection(in, planes, stride)) shortcut_ = register_module("shortcut", p);
}

Tensor BasicBlock::forward(const Tensor& x) {
    Tensor h = bn1_->forward_relu(conv1_->forward(x));
    h = bn2_->forward(conv2_->forward(h));
    return relu(add(h, shortcut_ ? shortcut_->forward(x) : x));
}

Bottleneck::Bottleneck(int64_t in, int64_t planes, int64_t stride) : Module("Bottleneck") {
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in, planes, 1, 1, 0, false));
    bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(planes));
    conv2_ = register_module("conv2", std::make_shared<Conv2d>(planes, planes, 3, stride, 1, false));
    bn2_ = register_module("bn2", std::make_shared<BatchNorm2d>(planes));
    conv3_ = register_module("conv3", std::make_shared<Conv2d>(planes, 4 * planes, 1, 1, 0, false));
    bn3_ = register_module("bn3", std::make_shared<BatchNorm2d>(4 * planes));
    if (auto p = projection(in, 4 * planes, stride)) shortcut_ = register_module("shortcut", p);
}

Tensor Bottleneck::forward(const Tensor& x) {
    Tensor h = bn1_->forward_relu(conv1_->forward(x));
    h = bn2_->forward_relu(conv2_->forward(h));
    h = bn3_->forward(conv3_->forward(h));
    return relu(add(h, shortcut_ ? shortcut_->forward(x) : x));
}

ResNet::ResNet(Block block, std::vector<int> blocks, int64_t num_classes, int64_t in_channels, int64_t input_size,
               int64_t base_width)
    : Classifier("ResNet") {
    if (base_width < 1) throw Error("ResNet: base width must be positive");
    if (blocks.size() != 4) throw Error("ResNet: expected 4 stages");
    require_positive_side(input_size, input_size, "ResNet");
    const int64_t expansion = block == Block::Basic ? 1 : 4;
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in_channels, base_width, 3, 1, 1, false));
    bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(base_width));
    const int64_t widths[4] = {base_width, 2 * base_width, 4 * base_width, 8 * base_width};
    int64_t in = base_width;
    for (int s = 0; s < 4; ++s) {
        auto stage = std::make_shared<Sequential>();
        for (int b = 0; b < blocks[s]; ++b) {
            const int64_t stride = (s > 0 && b == 0) ? 2 : 1;
            if (block == Block::Basic) stage->add(std::make_shared<BasicBlock>(in, widths[s], stride));
            else stage->add(std::make_shared<Bottleneck>(in, widths[s], stride));
            in = widths[s] * expansion;
        }
        layers_.push_back(register_module("layer" + std::to_string(s + 1), stage));
    }
    linear_ = register_module("linear", std::make_shared<Linear>(in, num_classes));
}

Tensor ResNet::representation(const Tensor& x) {
    Tensor h = bn1_->forward_relu(conv1_->forward(x));
    for (auto& stage : layers_) h = stage->forward(h);
    return global_avg_pool2d(h);
}

Tensor ResNet::classify(const Tensor& h) { return linear_->forward(h); }

}  // namespace cw::nn
