// Unit tests of the attack building blocks: objectives and their gradients, the FAB projection, APGD's and
// Square's schedules, target choice.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numeric>

#include "attacks/apgd_core.h"
#include "engine/linf_box_projection.h"
#include "attacks/losses.h"
#include "attacks/square.h"
#include "attacks/targets.h"
#include "engine/rng.h"

using namespace cw;
using namespace cw::attacks;

namespace {
using LossFn = std::function<float(const float*, float*)>;

// Central differences of f at z against its analytic gradient.
void check_gradient(const LossFn& f, std::vector<float> z) {
    const int64_t C = static_cast<int64_t>(z.size());
    std::vector<float> dz(C);
    f(z.data(), dz.data());
    for (int64_t j = 0; j < C; ++j) {
        const float h = 1e-3f, keep = z[j];
        z[j] = keep + h;
        const double up = f(z.data(), nullptr);
        z[j] = keep - h;
        const double down = f(z.data(), nullptr);
        z[j] = keep;
        INFO("logit " << j);
        REQUIRE(dz[j] == Approx((up - down) / (2 * h)).margin(2e-3));
    }
}
}  // namespace

TEST_CASE("attack objectives match their definitions and finite differences", "[attacks]") {
    // distinct logits: the sorted order does not change under the FD step
    const std::vector<float> z = {0.3f, 2.1f, -1.2f, 1.4f, 0.9f, -0.4f};
    const int64_t C = 6;

    const double lse = std::log(std::accumulate(z.begin(), z.end(), 0.0, [](double s, float v) { return s + std::exp(v); }));
    REQUIRE(cross_entropy(z.data(), C, 3, nullptr) == Approx(lse - 1.4));
    REQUIRE(neg_cross_entropy(z.data(), C, 3, nullptr) == Approx(-(lse - 1.4)));
    REQUIRE(margin(z.data(), C, 1) == Approx(2.1 - 1.4));
    REQUIRE(margin(z.data(), C, 4) == Approx(0.9 - 2.1));
    REQUIRE(cw_objective(z.data(), C, 1, 0.f, nullptr) == Approx(-(2.1 - 1.4)));
    REQUIRE(cw_objective(z.data(), C, 4, 0.f, nullptr) == 0.f);          // already misclassified: clamped
    REQUIRE(cw_objective(z.data(), C, 4, 50.f, nullptr) == Approx(-(0.9 - 2.1 + 50)));
    REQUIRE(targeted_margin(z.data(), C, 3, nullptr) == Approx(1.4 - 2.1));
    // DLR: y = argmax -> other = runner-up; denominator z_π1 − z_π3
    REQUIRE(dlr(z.data(), C, 1, nullptr) == Approx(-(2.1 - 1.4) / (2.1 - 0.9)));
    REQUIRE(dlr(z.data(), C, 0, nullptr) == Approx(-(0.3 - 2.1) / (2.1 - 0.9)));
    // targeted DLR: denominator z_π1 − (z_π3 + z_π4)/2
    REQUIRE(dlr_targeted(z.data(), C, 1, 5, nullptr) == Approx(-(2.1 - (-0.4)) / (2.1 - (0.9 + 0.3) / 2)));
    REQUIRE(logit_difference(z.data(), C, 1, 2, nullptr) == Approx(-1.2 - 2.1));
    REQUIRE(argmax_row(z.data(), C) == 1);
    REQUIRE(kth_largest(z.data(), C, 1) == 1);
    REQUIRE(kth_largest(z.data(), C, 2) == 3);
    REQUIRE(kth_largest(z.data(), C, 6) == 2);

    check_gradient([&](const float* v, float* d) { return cross_entropy(v, C, 2, d); }, z);
    check_gradient([&](const float* v, float* d) { return neg_cross_entropy(v, C, 2, d); }, z);
    check_gradient([&](const float* v, float* d) { return cw_objective(v, C, 1, 0.f, d); }, z);
    check_gradient([&](const float* v, float* d) { return targeted_margin(v, C, 5, d); }, z);
    for (int32_t y : {0, 1, 3})
        check_gradient([&](const float* v, float* d) { return dlr(v, C, y, d); }, z);
    for (int32_t y : {1, 4})
        check_gradient([&](const float* v, float* d) { return dlr_targeted(v, C, y, 0, d); }, z);
    check_gradient([&](const float* v, float* d) { return logit_difference(v, C, 0, 4, d); }, z);
}

TEST_CASE("the FAB L-inf projection is feasible and minimal", "[attacks]") {
    Rng rng(11);
    const int64_t n = 40;
    std::vector<LinfKink> scratch;
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<float> p(n), w(n), d(n);
        for (auto& v : p) v = rng.uniform();
        for (auto& v : w) v = rng.uniform() < 0.1f ? 0.f : rng.normal();
        double wp = 0, reach = 0;   // reach: the largest |change| of <w,·> inside the box
        for (int64_t j = 0; j < n; ++j) wp += double(w[j]) * p[j];
        const double sgn = rng.uniform() < 0.5f ? -1 : 1;
        for (int64_t j = 0; j < n; ++j) reach += std::fabs(w[j]) * ((w[j] * sgn > 0) ? 1.0 - p[j] : p[j]);
        // a target change of up to 130% of what the box allows: some trials are infeasible on purpose
        const double change = sgn * reach * rng.uniform(0.f, 1.3f);
        const float norm = linf_box_projection(p.data(), w.data(), wp + change, n, d.data(), scratch);

        float max_abs = 0;
        double wd = 0;
        for (int64_t j = 0; j < n; ++j) {
            REQUIRE(p[j] + d[j] >= -1e-6f);
            REQUIRE(p[j] + d[j] <= 1 + 1e-6f);
            if (w[j] == 0) REQUIRE(d[j] == 0.f);
            max_abs = std::max(max_abs, std::fabs(d[j]));
            wd += double(w[j]) * d[j];
        }
        REQUIRE(norm == Approx(max_abs));
        if (std::fabs(change) <= reach) {
            REQUIRE(wd == Approx(change).margin(1e-4));
            // minimal: with radius 0.999·||d|| the reachable change falls short
            double g = 0;
            for (int64_t j = 0; j < n; ++j)
                g += std::fabs(w[j]) * std::min(0.999 * norm, (w[j] * sgn > 0) ? 1.0 - p[j] : double(p[j]));
            REQUIRE(g < std::fabs(change) + 1e-9);
        } else {
            // infeasible: every coordinate goes to its box end in the helpful direction
            REQUIRE(wd == Approx(sgn * reach).margin(1e-4));
        }
    }
}

TEST_CASE("APGD checks its step size after iterations 22, 41, 57, 70, 80, 87, 93, 99", "[attacks]") {
    const ApgdSchedule s(100);
    REQUIRE(s.first == 22);
    REQUIRE(s.shrink == 3);
    REQUIRE(s.min == 6);
    REQUIRE(s.check_iterations(100) == std::vector<int>{21, 40, 56, 69, 79, 86, 92, 98});
}

TEST_CASE("Square's p schedule and window sides follow the AutoAttack table", "[attacks]") {
    const std::vector<int> iters = {0, 10, 11, 50, 51, 200, 201, 500, 501, 1000, 1001, 2000, 2001, 4000, 4001, 6000};
    const std::vector<int> cifar = {29, 29, 20, 20, 14, 14, 10, 10, 7, 7, 5, 5, 4, 4, 3, 3};
    const std::vector<int> mnist = {25, 25, 18, 18, 13, 13, 9, 9, 6, 6, 4, 4, 3, 3, 2, 2};
    for (size_t k = 0; k < iters.size(); ++k) {
        INFO("iteration " << iters[k]);
        REQUIRE(square_side(square_p_schedule(iters[k], 0.8f), 3, 32, 32) == cifar[k]);
        REQUIRE(square_side(square_p_schedule(iters[k], 0.8f), 1, 28, 28) == mnist[k]);
    }
    REQUIRE(square_p_schedule(6001, 0.8f) == Approx(0.8 / 256));
    REQUIRE(square_p_schedule(8001, 0.8f) == Approx(0.8 / 512));
    REQUIRE(square_side(0.8f, 3, 4, 4) == 4);   // capped at the image side
}

TEST_CASE("random targets are uniform over the other classes", "[attacks]") {
    Rng rng(3);
    std::vector<int32_t> y(4000);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int32_t>(i % 4);
    const auto t = random_targets(y, 4, rng);
    std::vector<int> count(16, 0);
    for (size_t i = 0; i < y.size(); ++i) {
        REQUIRE(t[i] != y[i]);
        ++count[y[i] * 4 + t[i]];
    }
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
            if (a != b) REQUIRE(std::abs(count[a * 4 + b] - 333) < 80);
}
