#include "attacks/targets.h"

#include <stdexcept>
#include <string>

namespace cw::attacks {

std::vector<int32_t> random_targets(const std::vector<int32_t>& y, int64_t num_classes, Rng& rng) {
    if (num_classes < 2) throw std::invalid_argument("targeted attack needs at least 2 classes");
    std::vector<int32_t> t(y.size());
    for (size_t i = 0; i < y.size(); ++i) {
        // uniform over C−1 classes, skipping y_i
        const auto r = static_cast<int32_t>(rng.below(static_cast<uint64_t>(num_classes - 1)));
        t[i] = r >= y[i] ? r + 1 : r;
    }
    return t;
}

TargetChoice::TargetChoice(Labels y, std::vector<int32_t> fixed, Rng& rng)
    : y_(std::move(y)), t_(std::move(fixed)), rng_(rng) {
    if (t_.empty()) return;
    const std::vector<int32_t>& labels = y_();
    for (size_t i = 0; i < t_.size(); ++i)
        if (t_[i] == labels[i])
            throw std::invalid_argument("targeted attack: sample " + std::to_string(i) + " has target = label " +
                                        std::to_string(labels[i]));
}

int32_t TargetChoice::operator()(int64_t i, int64_t num_classes) {
    if (t_.empty()) t_ = random_targets(y_(), num_classes, rng_);
    if (t_[i] < 0 || t_[i] >= num_classes)
        throw std::invalid_argument("targeted attack: target " + std::to_string(t_[i]) + " of sample " +
                                    std::to_string(i) + " is not a class of a " + std::to_string(num_classes) +
                                    "-class model");
    return t_[i];
}

Tensor TargetChoice::all_on(int64_t num_classes, Device device) {
    const size_t n = y_().size();
    for (size_t i = 0; i < n; ++i) (*this)(static_cast<int64_t>(i), num_classes);
    return Tensor::from_labels(t_, device);
}

}  // namespace cw::attacks
