// engine/cpu/lane_sum.h: the 16-lane float sums batch norm and the bias gradient use. Checked against sums in
// double computed here on lengths around the lane width (the tail), and the order of the additions worked by hand.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "engine/cpu/lane_sum.h"

using namespace cw;

namespace {

std::vector<float> ramp(int64_t n, float scale, float offset) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = offset + scale * float((i * 7919) % 101);
    return v;
}

}  // namespace

TEST_CASE("lane sums equal double sums on every length around the lane width", "[engine][lanes]") {
    for (int64_t n : {0, 1, 5, 15, 16, 17, 31, 32, 33, 100, 1023}) {
        const std::vector<float> x = ramp(n, 0.013f, -0.4f), g = ramp(n + 3, -0.021f, 0.7f);
        const float mean = 0.25f;
        double s = 0, ss = 0, sg = 0, sgc = 0;
        for (int64_t i = 0; i < n; ++i) {
            s += x[size_t(i)];
            ss += (double(x[size_t(i)]) - mean) * (double(x[size_t(i)]) - mean);
            sg += g[size_t(i)];
            sgc += double(g[size_t(i)]) * (double(x[size_t(i)]) - mean);
        }
        INFO("n = " << n);
        CHECK(lanes::sum(x.data(), n) == Approx(s).margin(1e-5));
        CHECK(lanes::sum_squared_deviation(x.data(), n, mean) == Approx(ss).margin(1e-5));
        const lanes::GradientSums both = lanes::sum_gradient(g.data(), x.data(), n, mean);
        CHECK(both.g == Approx(sg).margin(1e-5));
        CHECK(both.g_centered == Approx(sgc).margin(1e-5));
    }
}

TEST_CASE("lane sums add in the documented order: lane i % 16, folded 8, 4, 2, 1", "[engine][lanes]") {
    // 2^24 in lane 0 and 1 in lanes 1-15. By hand: fold 8 gives lane 0 2^24 + 1, which rounds to 2^24 (a tie, to
    // even), and lanes 1-7 2 each; fold 4: 2^24 + 2 (exact) and 4s; fold 2: 2^24 + 6 and 8; fold 1: 2^24 + 14. The exact
    // sum is 2^24 + 15, and one chain from the left gives 2^24 (every +1 rounds away). Any other grouping, say a
    // vector reduction whose order follows the register width, lands elsewhere.
    std::vector<float> x(16, 1.f);
    x[0] = 16777216.f;
    CHECK(lanes::sum(x.data(), 16) == 16777230.f);
    // The same values past the lane width go to the tail, added after the fold: 2^24 + 14 + 1 = 2^24 + 15, but
    // 2^24 + 15 is odd and rounds to even (2^24 + 16).
    x.push_back(1.f);
    CHECK(lanes::sum(x.data(), 17) == 16777232.f);
}
