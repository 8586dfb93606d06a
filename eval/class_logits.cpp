#include "eval/class_logits.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace cw::eval {

void add_class_logits(std::vector<double>& sums, const std::vector<float>& logits, const std::vector<int32_t>& labels,
                      int64_t classes) {
    const size_t C = static_cast<size_t>(classes);
    if (sums.size() != C * C || logits.size() != labels.size() * C)
        throw std::invalid_argument("class logits: " + std::to_string(logits.size()) + " logits for " +
                                    std::to_string(labels.size()) + " samples of " + std::to_string(classes) +
                                    " classes, into " + std::to_string(sums.size()) + " sums");
    for (size_t i = 0; i < labels.size(); ++i) {
        const size_t y = static_cast<size_t>(labels[i]);
        if (y >= C) throw std::invalid_argument("class logits: label " + std::to_string(labels[i]) + " out of range");
        for (size_t j = 0; j < C; ++j) sums[y * C + j] += logits[i * C + j];
    }
}

std::vector<std::vector<double>> class_mean_logits(const std::vector<double>& sums,
                                                   const std::vector<int64_t>& counts) {
    const size_t C = counts.size();
    if (sums.size() != C * C)
        throw std::invalid_argument("class logits: " + std::to_string(sums.size()) + " sums for " +
                                    std::to_string(C) + " classes, expected " + std::to_string(C * C));
    std::vector<std::vector<double>> mean(C, std::vector<double>(C, std::numeric_limits<double>::quiet_NaN()));
    for (size_t c = 0; c < C; ++c) {
        if (counts[c] == 0) continue;
        for (size_t j = 0; j < C; ++j) mean[c][j] = sums[c * C + j] / static_cast<double>(counts[c]);
    }
    return mean;
}

}  // namespace cw::eval
