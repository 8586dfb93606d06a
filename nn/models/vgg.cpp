#include "nn/models/vgg.h"

#include <vector>

namespace cw::nn {

namespace {
constexpr int kPool = 0;  // 'M' in the reference configuration lists

std::vector<int> layer_list(int depth) {
    if (depth == 16) return {64, 64, kPool, 128, 128, kPool, 256, 256, 256, kPool, 512, 512, 512, kPool, 512, 512, 512, kPool};
    if (depth == 19)
        return {64, 64, kPool, 128, 128, kPool, 256, 256, 256, 256, kPool, 512, 512, 512, 512, kPool,
                512, 512, 512, 512, kPool};
    throw Error("VGG: depth must be 16 or 19, got " + std::to_string(depth));
}
}  // namespace

VGG::VGG(int depth, int64_t num_classes, int64_t in_channels, int64_t input_size) : Classifier("VGG") {
    require_positive_side(input_size, input_size, "VGG");
    features_ = register_module("features", std::make_shared<Sequential>());
    int64_t channels = in_channels, side = input_size;
    for (int width : layer_list(depth)) {
        if (width == kPool) {
            if (side >= 2) {
                features_->add(std::make_shared<MaxPool2d>(2));
                side /= 2;
            } else {
                features_->add(std::make_shared<Identity>());
            }
            continue;
        }
        features_->add(std::make_shared<Conv2d>(channels, width, 3, 1, 1));
        features_->add(std::make_shared<BatchNorm2d>(width));
        features_->add(std::make_shared<ReLU>());
        channels = width;
    }
    features_->add(std::make_shared<Identity>());  // the reference's AvgPool2d(kernel 1, stride 1)
    classifier_ = register_module("classifier", std::make_shared<Linear>(512, num_classes));
}

Tensor VGG::logits(const Tensor& x) { return classifier_->forward(global_avg_pool2d(features_->forward(x))); }

}  // namespace cw::nn
