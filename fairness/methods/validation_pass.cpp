#include "fairness/methods/validation_pass.h"

#include <stdexcept>

#include "attacks/attack.h"
#include "engine/ops.h"

namespace cw::train {

const EvalSplit& require_validation(const Validation& v, const std::string& method) {
    if (!v.split || v.split->data.num_batches == 0)
        throw std::invalid_argument(method + ": needs a validation split (--val-split last:300 as FRL, or first:K)");
    return *v.split;
}

int output_classes(nn::Module& model, const EvalSplit& split) {
    attacks::ModeScope eval(model, attacks::ModelMode::Eval);
    NoGradGuard no_grad;
    return static_cast<int>(model(split.data.batch(0).images).size(1));
}

uint64_t epoch_seed(uint64_t seed, int64_t epoch) {
    return seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(epoch + 1));
}

}  // namespace cw::train
