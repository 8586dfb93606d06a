#include "fairness/methods/target_prior.h"

#include <algorithm>
#include <cmath>

namespace cw::train {

std::vector<double> target_prior(const std::vector<double>& cfp, TargetPrior kind, double scale, double floor) {
    std::vector<double> p(cfp.size());
    if (p.empty()) return p;
    if (kind == TargetPrior::Softmax) {
        const double top = *std::max_element(cfp.begin(), cfp.end());
        for (size_t k = 0; k < p.size(); ++k) p[k] = std::exp(scale * (cfp[k] - top));   // shifted: no overflow
    } else {
        for (size_t k = 0; k < p.size(); ++k) p[k] = std::max(cfp[k], floor);
    }
    double total = 0;
    for (double v : p) total += v;
    for (double& v : p) v /= total;
    return p;
}

int32_t draw_uniform_target(int num_classes, int32_t label, Rng& rng) {
    const auto t = static_cast<int32_t>(rng.below(static_cast<uint64_t>(num_classes - 1)));
    return t >= label ? t + 1 : t;
}

int32_t draw_target(const std::vector<double>& prior, int32_t label, Rng& rng) {
    double total = 0;
    for (size_t k = 0; k < prior.size(); ++k)
        if (static_cast<int32_t>(k) != label) total += prior[k];
    if (!(total > 0)) return draw_uniform_target(static_cast<int>(prior.size()), label, rng);
    const double u = static_cast<double>(rng.uniform()) * total;
    double acc = 0;
    int32_t last = -1;
    for (size_t k = 0; k < prior.size(); ++k) {
        if (static_cast<int32_t>(k) == label || prior[k] <= 0) continue;
        acc += prior[k];
        last = static_cast<int32_t>(k);
        if (u < acc) return last;
    }
    return last;   // rounding at the top end
}

}  // namespace cw::train
