#include "nn/models/googlenet.h"

namespace cw::nn {

namespace {
// Appends conv(k x k, "same" padding, bias) + BN + ReLU to a branch.
void conv_bn_relu(Sequential& seq, int64_t in, int64_t out, int64_t kernel) {
    seq.add(std::make_shared<Conv2d>(in, out, kernel, 1, kernel / 2));
    seq.add(std::make_shared<BatchNorm2d>(out));
    seq.add(std::make_shared<ReLU>());
}
}  // namespace

Inception::Inception(int64_t in, int64_t n1x1, int64_t n3x3_reduce, int64_t n3x3, int64_t n5x5_reduce, int64_t n5x5,
                     int64_t pool_planes)
    : Module("Inception") {
    b1_ = register_module("b1", std::make_shared<Sequential>());
    conv_bn_relu(*b1_, in, n1x1, 1);
    b2_ = register_module("b2", std::make_shared<Sequential>());
    conv_bn_relu(*b2_, in, n3x3_reduce, 1);
    conv_bn_relu(*b2_, n3x3_reduce, n3x3, 3);
    b3_ = register_module("b3", std::make_shared<Sequential>());
    conv_bn_relu(*b3_, in, n5x5_reduce, 1);
    conv_bn_relu(*b3_, n5x5_reduce, n5x5, 3);
    conv_bn_relu(*b3_, n5x5, n5x5, 3);
    b4_ = register_module("b4", std::make_shared<Sequential>());
    b4_->add(std::make_shared<MaxPool2d>(3, 1, 1));
    conv_bn_relu(*b4_, in, pool_planes, 1);
}

Tensor Inception::forward(const Tensor& x) {
    return concat({b1_->forward(x), b2_->forward(x), b3_->forward(x), b4_->forward(x)}, 1);
}

GoogLeNet::GoogLeNet(int64_t num_classes, int64_t in_channels, int64_t input_size) : Classifier("GoogLeNet") {
    require_positive_side(input_size, input_size, "GoogLeNet");
    pre_layers_ = register_module("pre_layers", std::make_shared<Sequential>());
    conv_bn_relu(*pre_layers_, in_channels, 192, 3);
    a3_ = register_module("a3", std::make_shared<Inception>(192, 64, 96, 128, 16, 32, 32));
    b3_ = register_module("b3", std::make_shared<Inception>(256, 128, 128, 192, 32, 96, 64));
    a4_ = register_module("a4", std::make_shared<Inception>(480, 192, 96, 208, 16, 48, 64));
    b4_ = register_module("b4", std::make_shared<Inception>(512, 160, 112, 224, 24, 64, 64));
    c4_ = register_module("c4", std::make_shared<Inception>(512, 128, 128, 256, 24, 64, 64));
    d4_ = register_module("d4", std::make_shared<Inception>(512, 112, 144, 288, 32, 64, 64));
    e4_ = register_module("e4", std::make_shared<Inception>(528, 256, 160, 320, 32, 128, 128));
    a5_ = register_module("a5", std::make_shared<Inception>(832, 256, 160, 320, 32, 128, 128));
    b5_ = register_module("b5", std::make_shared<Inception>(832, 384, 192, 384, 48, 128, 128));
    linear_ = register_module("linear", std::make_shared<Linear>(1024, num_classes));
}

Tensor GoogLeNet::logits(const Tensor& x) {
    Tensor h = b3_->forward(a3_->forward(pre_layers_->forward(x)));
    h = max_pool2d(h, 3, 2, 1);
    for (auto* m : {&a4_, &b4_, &c4_, &d4_, &e4_}) h = (*m)->forward(h);
    h = max_pool2d(h, 3, 2, 1);
    h = b5_->forward(a5_->forward(h));
    return linear_->forward(global_avg_pool2d(h));
}

}  // namespace cw::nn
