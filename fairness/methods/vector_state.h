#pragma once
// Per-class double vectors in a method's saved metadata, written with 17 significant digits so a resumed run
// continues with exactly the multipliers it stopped with (a float32 tensor would round them).
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn/model_registry.h"

namespace cw::train {

inline void put_vector(nn::Metadata& meta, const std::string& key, const std::vector<double>& v) {
    std::ostringstream os;
    os.precision(17);
    for (size_t i = 0; i < v.size(); ++i) os << (i ? " " : "") << v[i];
    meta[key] = os.str();
}

// Throws naming the key when it is missing or does not hold `size` numbers.
inline std::vector<double> get_vector(const nn::Metadata& meta, const std::string& key, size_t size) {
    const auto it = meta.find(key);
    if (it == meta.end()) throw std::invalid_argument("method state: missing '" + key + "'");
    std::istringstream is(it->second);
    std::vector<double> v;
    double x;
    while (is >> x) v.push_back(x);
    if (!is.eof() || v.size() != size)
        throw std::invalid_argument("method state: '" + key + "' should hold " + std::to_string(size) +
                                    " numbers, got '" + it->second + "'");
    return v;
}

}  // namespace cw::train
