#include "util/split_list.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include "util/parse_number.h"

namespace cw::util {

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

float positive_number(const std::string& flag, const std::string& item) {
    const std::optional<float> x = whole_float(item);
    if (!x || !(*x > 0) || !std::isfinite(*x)) throw std::invalid_argument(flag + ": '" + item + "' is not a positive number");
    return *x;
}

std::string join_list(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

}  // namespace cw::util
