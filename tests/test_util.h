#pragma once
// Small helpers shared by the engine tests.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "engine/gradcheck.h"
#include "engine/ops.h"

namespace cw_test {

inline cw::Tensor randn(const cw::Shape& shape, uint64_t seed, float scale = 1.f, bool grad = true) {
    cw::Rng rng(seed);
    std::vector<float> v(static_cast<size_t>(cw::shape_numel(shape)));
    rng.fill_normal(v.data(), v.size(), 0.f, scale);
    auto t = cw::Tensor::from_vector(v, shape);
    if (grad) t.set_requires_grad(true);
    return t;
}

// Values in [lo, hi] with magnitude at least `gap` — keeps finite differences away from kinks (relu, abs, ...).
inline cw::Tensor rand_away_from_zero(const cw::Shape& shape, uint64_t seed, float gap = 0.1f, float hi = 1.5f) {
    cw::Rng rng(seed);
    std::vector<float> v(static_cast<size_t>(cw::shape_numel(shape)));
    for (auto& x : v) x = (rng.uniform() < 0.5f ? -1.f : 1.f) * rng.uniform(gap, hi);
    return cw::Tensor::from_vector(v, shape).set_requires_grad(true);
}

// A permutation of well-separated values, so max/top-k/max-pool winners do not change under the FD step.
inline cw::Tensor distinct_values(const cw::Shape& shape, uint64_t seed, float spacing = 0.1f) {
    cw::Rng rng(seed);
    auto perm = rng.permutation(cw::shape_numel(shape));
    std::vector<float> v(perm.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = spacing * static_cast<float>(perm[i]) - 1.f;
    return cw::Tensor::from_vector(v, shape).set_requires_grad(true);
}

inline void require_gradcheck(const cw::OpUnderTest& f, const std::vector<cw::Tensor>& inputs,
                              const cw::GradCheckOptions& opt = {}) {
    const auto r = cw::gradcheck(f, inputs, opt);
    INFO(r.report);
    REQUIRE(r.checked > 0);
    REQUIRE(r.ok);
}

inline void require_close(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-5) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
        REQUIRE(std::fabs(got[i] - want[i]) <= tol * std::max(1.0, std::fabs(static_cast<double>(want[i]))));
    }
}

// The largest |got - want| over the elements; equal elements count 0, so matching infinities do too.
inline double max_abs_difference(const std::vector<float>& got, const std::vector<float>& want) {
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i]) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
    return worst;
}

// The message of the E that f() throws; fails the test if nothing is thrown (any other exception escapes and fails).
template <class E, class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    FAIL("expected an exception, nothing was thrown");
    return {};
}

}  // namespace cw_test
