#pragma once
// Number vectors in a training state's metadata, written exactly (17 significant digits for doubles) so a resumed
// run continues with exactly the counters, multipliers and RNG words it stopped with (a float32 tensor would
// round them). Used by the trainer and by every method's save_state / load_state.
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn/model_registry.h"

namespace cw::train {

template <class T>
void put_vector(nn::Metadata& meta, const std::string& key, const std::vector<T>& v) {
    std::ostringstream os;
    os.precision(17);
    for (size_t i = 0; i < v.size(); ++i) os << (i ? " " : "") << v[i];
    meta[key] = os.str();
}

// Throws naming the key when it is missing, malformed, or (size >= 0) does not hold `size` numbers. Commas are
// read as separators too (state files written before the trainer used this helper).
template <class T = double>
std::vector<T> get_vector(const nn::Metadata& meta, const std::string& key, long size = -1) {
    const auto it = meta.find(key);
    if (it == meta.end()) throw std::invalid_argument("training state: missing '" + key + "'");
    std::string text = it->second;
    for (char& c : text)
        if (c == ',') c = ' ';
    std::istringstream is(text);
    std::vector<T> v;
    T x{};
    while (is >> x) v.push_back(x);
    if (!is.eof() || (size >= 0 && v.size() != static_cast<size_t>(size)))
        throw std::invalid_argument("training state: '" + key + "' should hold " +
                                    (size < 0    ? std::string("only numbers")
                                     : size == 1 ? std::string("1 number")
                                                 : std::to_string(size) + " numbers") +
                                    ", got '" + it->second + "'");
    return v;
}

}  // namespace cw::train
