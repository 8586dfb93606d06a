#pragma once
// The generic finite-difference gradient checker used for every op (and for whole modules in nn tests).
//
// For inputs x_1..x_k and an op f, it checks the analytic gradient of L = sum(f(x) * R), with R a fixed random
// tensor (so every output element matters, with different weights), against central differences
// (L(x + h e_i) - L(x - h e_i)) / 2h. L is accumulated in double on the host. Additionally:
//  - every input's .grad is pre-filled with a sentinel before backward: the result must be sentinel + gradient,
//    which proves backward accumulates instead of overwriting;
//  - every freshly allocated tensor is filled with NaN during the check: a kernel that leaves a gradient element
//    unwritten yields NaN and fails.
#include <functional>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace cw {

struct GradCheckOptions {
    // float32 forward passes: with h = 1e-2 and O(1) inputs, rounding error in L is about 1e-7 * |L| / h
    // ~ 1e-5 |L| and truncation error O(h^2 f''') ~ 1e-4, so 1e-2 relative plus 2e-3 absolute (scaled by the
    // largest gradient) separates correct gradients from wrong ones (a wrong gradient is off by O(1)).
    double step = 1e-2;
    double rtol = 1e-2;
    double atol = 2e-3;
    float sentinel = 0.5f;
    uint64_t seed = 1234;
};

struct GradCheckResult {
    bool ok = true;
    double max_abs_error = 0;   // over all checked elements
    int64_t checked = 0;
    std::string report;         // first failures, human-readable
};

using OpUnderTest = std::function<Tensor(const std::vector<Tensor>&)>;

// Inputs that do not require grad are held fixed. All inputs must be on the CPU (parity tests cover devices).
GradCheckResult gradcheck(const OpUnderTest& f, std::vector<Tensor> inputs, const GradCheckOptions& opt = {});

}  // namespace cw
