#include "nn/models/lenet5.h"

namespace cw::nn {

LeNet5::LeNet5(int64_t num_classes, int64_t in_channels, int64_t input_size) : Classifier("LeNet5") {
    const int64_t pad = input_size == 28 ? 2 : 0;
    const int64_t side = ((input_size + 2 * pad - 4) / 2 - 4) / 2;
    require_positive_side(side, input_size, "LeNet5");
    conv1_ = register_module("conv1", std::make_shared<Conv2d>(in_channels, 6, 5, 1, pad));
    conv2_ = register_module("conv2", std::make_shared<Conv2d>(6, 16, 5));
    fc1_ = register_module("fc1", std::make_shared<Linear>(16 * side * side, 120));
    fc2_ = register_module("fc2", std::make_shared<Linear>(120, 84));
    fc3_ = register_module("fc3", std::make_shared<Linear>(84, num_classes));
}

Tensor LeNet5::representation(const Tensor& x) {
    Tensor h = conv1_->forward_relu_maxpool(x);
    h = conv2_->forward_relu_maxpool(h);
    h = relu(fc1_->forward(flatten(h)));
    return relu(fc2_->forward(h));
}

Tensor LeNet5::classify(const Tensor& h) { return fc3_->forward(h); }

}  // namespace cw::nn
