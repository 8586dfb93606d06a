#include "nn/models/classifier.h"

#include <string>

namespace cw::nn {

void require_positive_side(int64_t side, int64_t input_size, const char* model) {
    if (side < 1)
        throw ShapeError(std::string(model) + ": input size " + std::to_string(input_size) +
                         " is too small (a feature map would be empty)");
}

namespace {
[[noreturn]] void no_accessor(const std::string& model) {
    throw Error(model + ": no representation accessor (features()/head()); available for small_cnn, lenet5, "
                        "mnist_wong, preact_resnet*, resnet* and wrn*");
}
}  // namespace

Tensor Classifier::representation(const Tensor&) { no_accessor(type_name()); }
Tensor Classifier::classify(const Tensor&) { no_accessor(type_name()); }

}  // namespace cw::nn
