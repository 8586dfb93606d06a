#include "fairness/methods/longtail_weights.h"

#include <algorithm>
#include <cmath>

namespace cw::train {

std::vector<double> normalise_to_classes(std::vector<double> w) {
    double total = 0;
    for (double v : w) total += v;
    const double c = static_cast<double>(w.size());
    for (double& v : w) v = total > 0 ? v * c / total : 1.0;
    return w;
}

std::vector<double> cost_sensitive_weights(const std::vector<double>& robust_accuracy, double power) {
    std::vector<double> w;
    for (double r : robust_accuracy) w.push_back(std::pow(std::max(0.0, 1.0 - r), power));
    return normalise_to_classes(std::move(w));
}

std::vector<double> critical_class_weights(int num_classes, int critical, double omega) {
    std::vector<double> w(static_cast<size_t>(num_classes), 1.0);
    if (critical >= 0 && critical < num_classes) w[static_cast<size_t>(critical)] = omega;
    return normalise_to_classes(std::move(w));
}

std::vector<double> class_balanced_weights(const std::vector<int64_t>& counts, double beta) {
    std::vector<double> w;
    for (int64_t n : counts) {
        const double nk = static_cast<double>(std::max<int64_t>(n, 1));
        // 1 − β^n without cancellation for β close to 1
        w.push_back((1.0 - beta) / -std::expm1(nk * std::log(beta)));
    }
    return normalise_to_classes(std::move(w));
}

std::vector<double> ldam_margins(const std::vector<int64_t>& counts, double max_margin) {
    std::vector<double> m;
    for (int64_t n : counts) m.push_back(1.0 / std::pow(static_cast<double>(std::max<int64_t>(n, 1)), 0.25));
    const double top = m.empty() ? 1.0 : *std::max_element(m.begin(), m.end());
    for (double& v : m) v *= max_margin / top;
    return m;
}

}  // namespace cw::train
