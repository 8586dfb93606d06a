// See named_worst.h.
#include "report/named_worst.h"

#include <algorithm>
#include <cmath>

namespace cw::report::reproduction {

std::pair<double, double> wilson_interval(int k, int n) {
    const double z = 1.959963984540054, p = static_cast<double>(k) / n, z2n = z * z / n;
    const double centre = (p + z2n / 2) / (1 + z2n);
    const double half = z * std::sqrt(p * (1 - p) / n + z2n / (4.0 * n)) / (1 + z2n);
    return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

std::optional<NamedWorst> named_worst_outcome(const std::map<std::string, Arm>& arms,
                                              const std::vector<std::string>& classes, const std::string& name,
                                              const std::vector<std::string>& base_arms) {
    const auto it = std::find(classes.begin(), classes.end(), name);
    if (it == classes.end()) return std::nullopt;
    const size_t k = static_cast<size_t>(it - classes.begin());
    NamedWorst w;
    for (const std::string& base : base_arms) {
        const auto arm = arms.find(base);
        if (arm == arms.end()) continue;
        for (const auto& [seed, run] : arm->second) {
            const auto last = run.evals.find("last");
            if (last == run.evals.end() || !last->second.count("pgd20")) continue;
            ++w.runs;
            if (worst_class(last->second.at("pgd20").per_class) == k) ++w.named;
        }
    }
    if (w.runs == 0) return std::nullopt;
    std::tie(w.lo, w.hi) = wilson_interval(w.named, w.runs);
    w.v = w.lo > 0.5 ? Verdict::reproduced : w.hi < 0.5 ? Verdict::not_reproduced : Verdict::undecided;
    return w;
}

}  // namespace cw::report::reproduction
