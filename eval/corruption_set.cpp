#include "eval/corruption_set.h"

#include <algorithm>
#include <stdexcept>

#include "datasets/corruptions.h"
#include "util/split_list.h"

namespace cw::eval {

const std::vector<std::string>& benchmark_corruptions() {
    // CIFAR-10-C's files list the 15 benchmark corruptions first, then the 4 held-out ones.
    static const std::vector<std::string> names(data::corruption_names().begin(), data::corruption_names().begin() + 15);
    return names;
}

const std::vector<std::string>& fair_tat_corruptions() {
    static const std::vector<std::string> names{
        "gaussian_noise", "shot_noise", "speckle_noise", "impulse_noise", "defocus_blur", "gaussian_blur",
        "motion_blur", "zoom_blur", "snow", "fog", "brightness", "contrast", "elastic_transform", "pixelate",
        "jpeg_compression", "spatter", "saturate", "frost"};
    return names;
}

std::vector<std::string> parse_corruption_list(const std::string& flag, const std::string& text) {
    std::vector<std::string> out;
    auto add = [&](const std::string& name) {
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    };
    for (const std::string& item : util::split_list(text)) {
        if (item == "all") for (const auto& n : data::corruption_names()) add(n);
        else if (item == "benchmark") for (const auto& n : benchmark_corruptions()) add(n);
        else if (item == "fair-tat") for (const auto& n : fair_tat_corruptions()) add(n);
        else if (data::is_corruption(item)) add(item);
        else {
            std::string known;
            for (const auto& n : data::corruption_names()) known += ", " + n;
            throw std::invalid_argument(flag + ": unknown corruption '" + item +
                                        "' (expected all, benchmark, fair-tat or names among" + known.substr(1) + ")");
        }
    }
    return out;
}

std::vector<int> parse_severities(const std::string& flag, const std::string& text) {
    std::vector<int> out;
    auto bad = [&] {
        return std::invalid_argument(flag + ": expected severities from 1 to 5 such as 1,2,3,4,5 or 1-5, got '" +
                                     text + "'");
    };
    auto number = [&](const std::string& s) {
        if (s.size() != 1 || s[0] < '1' || s[0] > '5') throw bad();
        return s[0] - '0';
    };
    for (const std::string& item : util::split_list(text)) {
        const size_t dash = item.find('-');
        const int lo = number(item.substr(0, dash));
        const int hi = dash == std::string::npos ? lo : number(item.substr(dash + 1));
        if (hi < lo) throw bad();
        for (int s = lo; s <= hi; ++s) out.push_back(s);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.empty()) throw bad();
    return out;
}

}  // namespace cw::eval
