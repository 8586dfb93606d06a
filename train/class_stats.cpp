#include "train/class_stats.h"

#include <stdexcept>
#include <string>

namespace cw::train {

ClassStats::ClassStats(int num_classes)
    : seen(num_classes, 0), correct(num_classes, 0), predicted(num_classes, 0), loss_sum(num_classes, 0.0) {}

void ClassStats::add(const std::vector<int32_t>& labels, const std::vector<int32_t>& predictions,
                     const std::vector<float>& per_sample_loss) {
    if (predictions.size() != labels.size() || (!per_sample_loss.empty() && per_sample_loss.size() != labels.size()))
        throw std::invalid_argument("ClassStats::add: " + std::to_string(labels.size()) + " labels but " +
                                    std::to_string(predictions.size()) + " predictions and " +
                                    std::to_string(per_sample_loss.size()) + " losses");
    const int C = num_classes();
    for (size_t i = 0; i < labels.size(); ++i) {
        const int32_t y = labels[i], p = predictions[i];
        if (y < 0 || y >= C || p < 0 || p >= C)
            throw std::invalid_argument("ClassStats::add: class " + std::to_string(y < 0 || y >= C ? y : p) +
                                        " outside [0, " + std::to_string(C) + ")");
        ++seen[y];
        if (p == y) ++correct[y];
        else ++predicted[p];
        if (!per_sample_loss.empty()) loss_sum[y] += per_sample_loss[i];
    }
}

void ClassStats::clear() { *this = ClassStats(num_classes()); }

int64_t ClassStats::total_seen() const {
    int64_t n = 0;
    for (int64_t s : seen) n += s;
    return n;
}

int64_t ClassStats::total_correct() const {
    int64_t n = 0;
    for (int64_t c : correct) n += c;
    return n;
}

std::vector<double> ClassStats::accuracy() const {
    std::vector<double> a(seen.size(), 0.0);
    for (size_t k = 0; k < seen.size(); ++k)
        if (seen[k] > 0) a[k] = static_cast<double>(correct[k]) / static_cast<double>(seen[k]);
    return a;
}

std::vector<double> ClassStats::accuracy_times_classes_over_n() const {
    std::vector<double> a(seen.size(), 0.0);
    const int64_t n = total_seen();
    if (n == 0) return a;
    for (size_t k = 0; k < seen.size(); ++k)
        a[k] = static_cast<double>(correct[k]) * static_cast<double>(seen.size()) / static_cast<double>(n);
    return a;
}

std::vector<double> ClassStats::cfp() const {
    std::vector<double> c(seen.size(), 0.0);
    const int64_t wrong = total_wrong();
    if (wrong == 0) return c;
    for (size_t k = 0; k < seen.size(); ++k) c[k] = static_cast<double>(predicted[k]) / static_cast<double>(wrong);
    return c;
}

}  // namespace cw::train
