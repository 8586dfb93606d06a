#pragma once
// docs/protocols/longtail.md §5: which samples of a batch are attacked toward the designated class c* (targeted PGD) instead of untargeted.
#include <cstdint>
#include <vector>

#include "engine/rng.h"

namespace cw::train {

// For each sample: c* with probability p (one Bernoulli draw per sample, in order, also for y = c*, so the stream
// does not depend on the labels' order of classes), or −1 = untargeted. A sample with y = c* is never targeted.
std::vector<int32_t> draw_critical_targets(const std::vector<int32_t>& labels, int critical, float p, Rng& rng);

}  // namespace cw::train
