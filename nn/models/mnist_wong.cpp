#include "nn/models/mnist_wong.h"

namespace cw::nn {

MnistWong::MnistWong(int64_t num_classes, int64_t in_channels, int64_t input_size) : Classifier("MnistWong") {
    // each conv4x4 / stride 2 / pad 1 halves the side (floor)
    const int64_t side = input_size / 4;
    require_positive_side(side, input_size, "MnistWong");
    conv1_ = register_module("0", std::make_shared<Conv2d>(in_channels, 16, 4, 2, 1));
    conv2_ = register_module("2", std::make_shared<Conv2d>(16, 32, 4, 2, 1));
    fc1_ = register_module("5", std::make_shared<Linear>(32 * side * side, 100));
    fc2_ = register_module("7", std::make_shared<Linear>(100, num_classes));
}

Tensor MnistWong::representation(const Tensor& x) {
    Tensor h = conv2_->forward_relu(conv1_->forward_relu(x));
    return relu(fc1_->forward(flatten(h)));
}

Tensor MnistWong::classify(const Tensor& h) { return fc2_->forward(h); }

}  // namespace cw::nn
