#include "fairness/methods/class_calibration.h"

#include <stdexcept>

namespace cw::train {

std::vector<float> calibrated(float lambda, const std::vector<double>& t, float v) {
    std::vector<float> out(t.size());
    for (size_t k = 0; k < t.size(); ++k) out[k] = static_cast<float>((lambda + t[k]) * v);
    return out;
}

Tensor class_vector_tensor(const std::vector<double>& v) {
    return Tensor::from_vector(std::vector<float>(v.begin(), v.end()), {static_cast<int64_t>(v.size())});
}

std::vector<double> read_class_vector(const std::map<std::string, Tensor>& tensors, const std::string& key,
                                      int num_classes, const std::string& owner) {
    const auto it = tensors.find(key);
    if (it == tensors.end()) throw std::runtime_error(owner + " state: missing per-class tensor '" + key + "'");
    const std::vector<float> v = it->second.to_vector();
    if (static_cast<int>(v.size()) != num_classes)
        throw std::runtime_error(owner + " state: tensor '" + key + "' has " + std::to_string(v.size()) +
                                 " entries, expected one per class (" + std::to_string(num_classes) + ")");
    return as_double(v);
}

std::vector<double> as_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

std::vector<double> float_rounded(const std::vector<double>& v) {
    std::vector<double> out(v.size());
    for (size_t k = 0; k < v.size(); ++k) out[k] = static_cast<float>(v[k]);
    return out;
}

}  // namespace cw::train
