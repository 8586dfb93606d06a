#include "nn/models/classifier.h"

#include <string>

namespace cw::nn {

void require_positive_side(int64_t side, int64_t input_size, const char* model) {
    if (side < 1)
        throw ShapeError(std::string(model) + ": input size " + std::to_string(input_size) +
                         " is too small (a feature map would be empty)");
}

}  // namespace cw::nn
