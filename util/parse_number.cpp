#include "util/parse_number.h"

#include <stdexcept>

namespace cw::util {

namespace {

// `parse` is one of std::stod, std::stof, std::stoll; they throw std::invalid_argument (no number at the start) or
// std::out_of_range, both logic errors, and report in `used` how much of the text they read.
template <class T, class Parse>
std::optional<T> whole(const std::string& text, Parse parse) {
    size_t used = 0;
    try {
        const T value = parse(text, &used);
        if (used == text.size()) return value;
    } catch (const std::logic_error&) {
    }
    return std::nullopt;
}

}  // namespace

std::optional<double> whole_double(const std::string& text) {
    return whole<double>(text, [](const std::string& s, size_t* used) { return std::stod(s, used); });
}

std::optional<float> whole_float(const std::string& text) {
    return whole<float>(text, [](const std::string& s, size_t* used) { return std::stof(s, used); });
}

std::optional<long long> whole_integer(const std::string& text) {
    return whole<long long>(text, [](const std::string& s, size_t* used) { return std::stoll(s, used, 10); });
}

}  // namespace cw::util
