#include "nn/models/small_cnn.h"

#include <cmath>

namespace cw::nn {

SmallCNN::SmallCNN(int64_t num_classes, int64_t in_channels, int64_t input_size, float drop) : Module("SmallCNN") {
    auto c1 = std::make_shared<Conv2d>(in_channels, 32, 3), c2 = std::make_shared<Conv2d>(32, 32, 3);
    auto c3 = std::make_shared<Conv2d>(32, 64, 3), c4 = std::make_shared<Conv2d>(64, 64, 3);
    features_ = register_module("feature_extractor", std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
        c1, std::make_shared<ReLU>(), c2, std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2),
        c3, std::make_shared<ReLU>(), c4, std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2)}));
    const int64_t side = ((input_size - 4) / 2 - 4) / 2;
    if (side < 1) throw Error("SmallCNN: input size " + std::to_string(input_size) + " is too small");
    auto fc3 = std::make_shared<Linear>(200, num_classes);
    classifier_ = register_module("classifier", std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
        std::make_shared<Linear>(64 * side * side, 200), std::make_shared<ReLU>(), std::make_shared<Dropout>(drop),
        std::make_shared<Linear>(200, 200), std::make_shared<ReLU>(), fc3}));
    // TRADES: Kaiming-normal conv weights, zero conv biases, last layer zero-initialised.
    Rng& rng = global_rng();
    for (auto& conv : {c1, c2, c3, c4}) {
        std::vector<float> w(static_cast<size_t>(conv->weight.numel()));
        const float fan_in = static_cast<float>(conv->weight.size(1) * 9);  // kaiming_normal_ defaults: fan_in, ReLU gain
        rng.fill_normal(w.data(), w.size(), 0.f, std::sqrt(2.f / fan_in));
        conv->weight.copy_from(Tensor::from_vector(w, conv->weight.shape()));
        conv->bias->zero_();
    }
    fc3->weight.zero_();
    fc3->bias->zero_();
}

Tensor SmallCNN::forward(const Tensor& x) { return classifier_->forward(flatten(features_->forward(x))); }

}  // namespace cw::nn
