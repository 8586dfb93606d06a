#include "fairness/methods/critical_targets.h"

namespace cw::train {

std::vector<int32_t> draw_critical_targets(const std::vector<int32_t>& labels, int critical, float p, Rng& rng) {
    std::vector<int32_t> t;
    t.reserve(labels.size());
    for (int32_t y : labels) {
        const bool hit = rng.bernoulli(p);
        t.push_back(hit && y != critical ? critical : -1);
    }
    return t;
}

}  // namespace cw::train
