#pragma once
// Target classes of targeted attacks (docs/protocols/attacks.md §7). A caller may fix them per sample (FAIR-TAT draws them from
// its CFP prior); otherwise the attack's rule picks them. The class count is only known once the model has
// produced logits, so random targets are drawn lazily, all at once, at the first request.
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/rng.h"
#include "engine/tensor.h"

namespace cw::attacks {

// t_i uniform over the classes ≠ y_i.
std::vector<int32_t> random_targets(const std::vector<int32_t>& y, int64_t num_classes, Rng& rng);

class TargetChoice {
public:
    // The labels, asked for only when needed: to check `fixed` targets or to draw random ones.
    using Labels = std::function<const std::vector<int32_t>&()>;
    // `fixed` (one per sample) wins; otherwise random targets ≠ y from `rng`.
    TargetChoice(Labels y, std::vector<int32_t> fixed, Rng& rng);
    int32_t operator()(int64_t i, int64_t num_classes);
    // Every sample's target for a `num_classes`-class model (drawn now if not fixed), on `device`.
    Tensor all_on(int64_t num_classes, Device device);
    // The targets used (empty if none was requested yet).
    const std::vector<int32_t>& all() const { return t_; }

private:
    Labels y_;
    std::vector<int32_t> t_;
    Rng& rng_;
};

}  // namespace cw::attacks
