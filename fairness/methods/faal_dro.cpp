#include "fairness/methods/faal_dro.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace cw::train {

namespace {

// KL(u ‖ p(s)) in the form that keeps its accuracy for small s (no cancellation of two log terms near log K):
// log(1 − mean_k sδ_k/(1 + sδ_k)) + mean_k log1p(sδ_k).
double kl_at(const std::vector<double>& delta, double s) {
    double shrink = 0, grow = 0;
    for (double d : delta) {
        shrink += s * d / (1 + s * d);
        grow += std::log1p(s * d);
    }
    const double k = static_cast<double>(delta.size());
    return std::log1p(-shrink / k) + grow / k;
}

std::vector<double> weights_at(const std::vector<double>& delta, double s) {
    std::vector<double> p;
    double total = 0;
    for (double d : delta) {
        p.push_back(1 / (1 + s * d));
        total += p.back();
    }
    for (double& v : p) v /= total;
    return p;
}

}  // namespace

double faal_reverse_kl(const std::vector<double>& p) {
    const double k = static_cast<double>(p.size());
    double sum = 0;
    for (double v : p) {
        if (!(v > 0)) return std::numeric_limits<double>::infinity();
        sum += std::log(1 / (k * v));
    }
    return sum / k;
}

std::vector<double> faal_dro_weights(const std::vector<double>& c, double radius) {
    if (c.empty()) throw std::invalid_argument("faal: the DRO weights need at least one class loss");
    for (double v : c)
        if (!std::isfinite(v)) throw std::invalid_argument("faal: a class loss is not finite (" + std::to_string(v) + ")");
    if (!(radius >= 0) || !std::isfinite(radius))
        throw std::invalid_argument("faal: the uncertainty-set radius must be a finite number >= 0, got " + std::to_string(radius));
    const auto [lo, hi] = std::minmax_element(c.begin(), c.end());
    const double spread = *hi - *lo;
    const double k = static_cast<double>(c.size());
    if (radius == 0 || !(spread > 0)) return std::vector<double>(c.size(), 1 / k);
    // δ_k ∈ [0, 1]: p* is unchanged by adding a constant to c or scaling it by a positive factor.
    std::vector<double> delta;
    for (double v : c) delta.push_back((*hi - v) / spread);
    // Bracket the root of KL(s) = r: KL(0) = 0 < r; double s until KL(s) >= r (KL grows like (1 − m/K)·log s).
    double s_lo = 0, s_hi = 1;
    while (kl_at(delta, s_hi) < radius) {
        s_lo = s_hi;
        s_hi *= 2;
        if (s_hi > 1e300) return weights_at(delta, s_hi);   // the limit: the mass on the largest c_k
    }
    // Bisection (geometric once s_lo > 0, as s spans orders of magnitude) to the last representable digits.
    for (int it = 0; it < 2000 && s_hi - s_lo > 1e-15 * s_hi; ++it) {
        const double mid = s_lo > 0 ? std::sqrt(s_lo * s_hi) : 0.5 * s_hi;
        if (mid <= s_lo || mid >= s_hi) break;
        (kl_at(delta, mid) < radius ? s_lo : s_hi) = mid;
    }
    return weights_at(delta, 0.5 * (s_lo + s_hi));
}

std::vector<double> faal_class_margins(const std::vector<float>& probs, const std::vector<int32_t>& labels, int classes,
                                       std::vector<int64_t>& counts) {
    if (classes < 2) throw std::invalid_argument("faal: the class margins need at least 2 classes");
    if (probs.size() != labels.size() * static_cast<size_t>(classes))
        throw std::invalid_argument("faal: " + std::to_string(probs.size()) + " probabilities for " +
                                    std::to_string(labels.size()) + " samples of " + std::to_string(classes) + " classes");
    std::vector<double> sum(classes, 0.0);
    counts.assign(classes, 0);
    for (size_t i = 0; i < labels.size(); ++i) {
        const int32_t y = labels[i];
        if (y < 0 || y >= classes) throw std::invalid_argument("faal: label " + std::to_string(y) + " outside the classes");
        const float* row = probs.data() + i * classes;
        double top_other = -1;
        for (int j = 0; j < classes; ++j)
            if (j != y) top_other = std::max(top_other, static_cast<double>(row[j]));
        sum[y] += top_other - static_cast<double>(row[y]);
        ++counts[y];
    }
    std::vector<double> margin(classes);
    for (int k = 0; k < classes; ++k) margin[k] = counts[k] ? sum[k] / static_cast<double>(counts[k]) : -1.0;
    return margin;
}

}  // namespace cw::train
