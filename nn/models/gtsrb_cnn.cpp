#include "nn/models/gtsrb_cnn.h"

namespace cw::nn {

GtsrbCnn::GtsrbCnn(int64_t num_classes, int64_t in_channels, int64_t input_size) : Classifier("GtsrbCnn") {
    const int64_t side = input_size / 4;
    require_positive_side(side, input_size, "GtsrbCnn");
    features_ = register_module("features", std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
        std::make_shared<Conv2d>(in_channels, 32, 3, 1, 1), std::make_shared<ReLU>(),
        std::make_shared<Conv2d>(32, 64, 3, 1, 1), std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2),
        std::make_shared<Conv2d>(64, 128, 3, 1, 1), std::make_shared<ReLU>(),
        std::make_shared<Conv2d>(128, 128, 3, 1, 1), std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2)}));
    classifier_ = register_module("classifier", std::make_shared<Linear>(128 * side * side, num_classes));
}

Tensor GtsrbCnn::logits(const Tensor& x) { return classifier_->forward(flatten(features_->forward(x))); }

}  // namespace cw::nn
