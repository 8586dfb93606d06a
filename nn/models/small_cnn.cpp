#include "nn/models/small_cnn.h"

#include "nn/init.h"

namespace cw::nn {

SmallCNN::SmallCNN(int64_t num_classes, int64_t in_channels, int64_t input_size, float drop) : Classifier("SmallCNN") {
    const int64_t side = ((input_size - 4) / 2 - 4) / 2;
    require_positive_side(side, input_size, "SmallCNN");
    auto c1 = std::make_shared<Conv2d>(in_channels, 32, 3), c2 = std::make_shared<Conv2d>(32, 32, 3);
    auto c3 = std::make_shared<Conv2d>(32, 64, 3), c4 = std::make_shared<Conv2d>(64, 64, 3);
    features_ = register_module("feature_extractor", std::make_shared<Sequential>());
    features_->add("conv1", c1).add("relu1", std::make_shared<ReLU>());
    features_->add("conv2", c2).add("relu2", std::make_shared<ReLU>());
    features_->add("maxpool1", std::make_shared<MaxPool2d>(2));
    features_->add("conv3", c3).add("relu3", std::make_shared<ReLU>());
    features_->add("conv4", c4).add("relu4", std::make_shared<ReLU>());
    features_->add("maxpool2", std::make_shared<MaxPool2d>(2));

    auto fc3 = std::make_shared<Linear>(200, num_classes);
    classifier_ = register_module("classifier", std::make_shared<Sequential>());
    classifier_->add("fc1", std::make_shared<Linear>(64 * side * side, 200)).add("relu1", std::make_shared<ReLU>());
    classifier_->add("drop", std::make_shared<Dropout>(drop));
    classifier_->add("fc2", std::make_shared<Linear>(200, 200)).add("relu2", std::make_shared<ReLU>());
    classifier_->add("fc3", fc3);

    // TRADES: Kaiming-normal conv weights (fan_in, ReLU gain), zero conv biases, last layer zero-initialised.
    for (auto& conv : {c1, c2, c3, c4}) {
        init::kaiming_normal_(conv->weight, init::Fan::In);
        conv->bias->zero_();
    }
    fc3->weight.zero_();
    fc3->bias->zero_();
}

// The representation is the output of relu2 (the input of fc3): every classifier layer but the last.
Tensor SmallCNN::representation(const Tensor& x) {
    Tensor h = flatten(features_->forward(x));
    for (size_t i = 0; i + 1 < classifier_->size(); ++i) h = (*classifier_)[i]->forward(h);
    return h;
}

Tensor SmallCNN::classify(const Tensor& h) { return (*classifier_)[classifier_->size() - 1]->forward(h); }

}  // namespace cw::nn
