// FAAL's rules (fairness/methods/faal_dro.h, faal.h; docs/protocols/faal.md): the class-wise DRO weights against a
// closed form (K = 2) and an exhaustive search over the simplex (K = 3, 4), their edge cases (equal losses, radius
// 0 and large, ties), the per-class margin by hand, and the code's batch-count objective.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fairness/methods/faal.h"
#include "fairness/methods/faal_dro.h"
#include "jobs/registry.h"

using namespace cw;
using namespace cw::train;

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

// KL(u ‖ p) written out again here, independently of faal_reverse_kl.
double kl_uniform_to(const std::vector<double>& p) {
    const double k = static_cast<double>(p.size());
    double s = 0;
    for (double v : p) s += -std::log(k * v) / k;
    return s;
}

struct GridBest {
    double value = -std::numeric_limits<double>::infinity();
    std::vector<double> p;
};

// Every p on the simplex grid with spacing 1/n (all entries > 0) that satisfies KL(u ‖ p) <= r: the best c·p.
GridBest grid_search(const std::vector<double>& c, double r, int n) {
    GridBest best;
    const size_t k = c.size();
    std::vector<int> idx(k - 1, 1);
    auto visit = [&](const std::vector<double>& p) {
        if (kl_uniform_to(p) > r) return;
        const double v = dot(c, p);
        if (v > best.value) best = {v, p};
    };
    if (k == 3) {
        for (int a = 1; a < n; ++a)
            for (int b = 1; a + b < n; ++b) visit({a / double(n), b / double(n), (n - a - b) / double(n)});
    } else if (k == 4) {
        for (int a = 1; a < n; ++a)
            for (int b = 1; a + b < n; ++b)
                for (int d = 1; a + b + d < n; ++d)
                    visit({a / double(n), b / double(n), d / double(n), (n - a - b - d) / double(n)});
    }
    return best;
}

}  // namespace

TEST_CASE("faal dro: K = 2 against the closed form p_max = (1 + sqrt(1 - exp(-2r)))/2", "[fair][faal]") {
    // With two classes KL(u ‖ p) = -(1/2)·log(4·p·(1-p)) <= r  ⇔  p·(1-p) >= exp(-2r)/4, and the best p puts the
    // larger root on the larger loss, whatever the two losses are.
    for (double r : {0.01, 0.1, 0.5, 1.0, 3.0}) {
        const double want = (1 + std::sqrt(1 - std::exp(-2 * r))) / 2;
        const std::vector<double> p = faal_dro_weights({0.3, -0.7}, r);
        INFO("r = " << r);
        CHECK(p[0] == Approx(want).epsilon(1e-12));
        CHECK(p[1] == Approx(1 - want).epsilon(1e-10));
        const std::vector<double> q = faal_dro_weights({-5.0, 2.0}, r);
        CHECK(q[1] == Approx(want).epsilon(1e-12));
    }
    // r = 0.5 by hand: exp(-1) = 0.3678794, sqrt(0.6321206) = 0.7950601, p = 0.8975300.
    CHECK(faal_dro_weights({1.0, 0.0}, 0.5)[0] == Approx(0.8975300).epsilon(1e-6));
}

TEST_CASE("faal dro: K = 3 and 4 against an exhaustive search over the simplex", "[fair][faal]") {
    struct Case {
        std::vector<double> c;
        double r;
        int n;
    };
    const std::vector<Case> cases = {
        {{0.2, -0.1, 0.5}, 0.5, 1200},  {{0.2, -0.1, 0.5}, 0.05, 1200}, {{3.0, 1.0, 1.0}, 1.0, 1200},
        {{-0.9, -0.4, -0.8}, 2.0, 1200}, {{12.8, -3.2, 0.0}, 0.2, 1200},  // batch-count scale, a class absent (c = 0)
        {{0.1, 0.4, -0.3, 0.2}, 0.5, 140}, {{1.0, 0.0, 0.0, 0.0}, 0.3, 140},
    };
    for (const Case& t : cases) {
        const std::vector<double> p = faal_dro_weights(t.c, t.r);
        const GridBest g = grid_search(t.c, t.r, t.n);
        double spread = 0;
        for (double a : t.c)
            for (double b : t.c) spread = std::max(spread, a - b);
        INFO("c[0] " << t.c[0] << ", r " << t.r << ": solver " << dot(t.c, p) << ", grid " << g.value);
        // On the simplex and on the boundary of the KL ball (the constraint is active for unequal losses).
        double total = 0;
        for (double v : p) {
            total += v;
            CHECK(v > 0);
        }
        CHECK(total == Approx(1).epsilon(1e-12));
        CHECK(kl_uniform_to(p) == Approx(t.r).epsilon(1e-9));
        // At least as good as every feasible grid point, and no better than the grid's best by more than a grid cell
        // can hide (|c·Δp| <= spread · K/n).
        CHECK(dot(t.c, p) >= g.value - 1e-12);
        CHECK(dot(t.c, p) <= g.value + spread * static_cast<double>(t.c.size()) / t.n);
        for (size_t k = 0; k < p.size(); ++k) CHECK(std::abs(p[k] - g.p[k]) < 0.02);
    }
}

TEST_CASE("faal dro: equal losses, radius 0, large radii, ties and invariances", "[fair][faal]") {
    // Equal losses: every feasible p is optimal; the centre (uniform) is returned, for any radius.
    for (double r : {0.0, 0.5, 100.0}) {
        const std::vector<double> p = faal_dro_weights({0.4, 0.4, 0.4, 0.4}, r);
        for (double v : p) CHECK(v == 0.25);
    }
    // Radius 0: the set is the uniform alone, whatever the losses (FAAL is then plain AT).
    for (double v : faal_dro_weights({0.9, -0.2, 0.1}, 0.0)) CHECK(v == Approx(1.0 / 3).epsilon(1e-15));
    // Large radii: the mass moves onto the largest loss; ties at the top share it evenly.
    const std::vector<double> big = faal_dro_weights({0.1, 0.7, -0.3}, 20.0);
    CHECK(big[1] > 1 - 1e-8);
    const std::vector<double> huge = faal_dro_weights({0.1, 0.7, -0.3}, 1e5);   // s overflows: the limit
    CHECK(huge[1] == Approx(1.0).epsilon(1e-12));
    const std::vector<double> tie = faal_dro_weights({0.6, 0.6, 0.0}, 30.0);
    CHECK(tie[0] == Approx(0.5).epsilon(1e-9));
    CHECK(tie[1] == Approx(0.5).epsilon(1e-9));
    CHECK(tie[2] < 1e-9);
    // The weight on the largest loss grows with the radius.
    double last = 0;
    for (double r : {0.01, 0.1, 0.5, 1.0, 2.0, 5.0}) {
        const double top = faal_dro_weights({0.2, -0.1, 0.5}, r)[2];
        CHECK(top > last);
        last = top;
    }
    // Adding a constant to the losses or scaling them by a positive factor leaves p unchanged.
    const std::vector<double> p = faal_dro_weights({0.2, -0.1, 0.5}, 0.5);
    const std::vector<double> q = faal_dro_weights({7.6, 4.6, 10.6}, 0.5);   // 10·c + 5.6
    for (size_t k = 0; k < 3; ++k) CHECK(q[k] == Approx(p[k]).epsilon(1e-12));
    // A tiny radius: the first-order answer p_k ≈ (1/K)(1 + sqrt(2rK/Σ(c−c̄)²)·(c_k − c̄)) (the KL ball is a
    // sphere of radius sqrt(2r) in the metric Σ (K·Δp_k)²/K to first order).
    const double r = 1e-10;
    const std::vector<double> c{0.2, -0.1, 0.5};
    const double mean = (0.2 - 0.1 + 0.5) / 3;
    double ss = 0;
    for (double v : c) ss += (v - mean) * (v - mean);
    const std::vector<double> small = faal_dro_weights(c, r);
    for (size_t k = 0; k < 3; ++k)
        CHECK(small[k] == Approx((1 + std::sqrt(2 * r * 3 / ss) * (c[k] - mean)) / 3).epsilon(1e-7));
}

TEST_CASE("faal dro: bad input is a clear error", "[fair][faal]") {
    CHECK_THROWS_WITH(faal_dro_weights({}, 0.5), Catch::Contains("at least one class"));
    CHECK_THROWS_WITH(faal_dro_weights({0.1, std::nan("")}, 0.5), Catch::Contains("not finite"));
    CHECK_THROWS_WITH(faal_dro_weights({0.1, 0.2}, -1), Catch::Contains("radius"));
    CHECK_THROWS_WITH(faal_dro_weights({0.1, 0.2}, std::numeric_limits<double>::infinity()), Catch::Contains("radius"));
    MethodOptions o;
    o.faal.radius = -0.5;
    CHECK_THROWS_WITH(make_method("faal", o), Catch::Contains("--faal-radius"));
    CHECK(faal_reverse_kl({0.5, 0.5}) == 0);
    CHECK(faal_reverse_kl({1.0, 0.0}) == std::numeric_limits<double>::infinity());
}

TEST_CASE("faal: the per-class margin max_{j!=y} p_j - p_y by hand, -1 for an absent class", "[fair][faal]") {
    // 4 samples, 3 classes; class 2 absent.
    const std::vector<float> probs = {
        0.7f, 0.2f, 0.1f,   // y = 0: 0.2 - 0.7 = -0.5
        0.1f, 0.3f, 0.6f,   // y = 0: 0.6 - 0.1 =  0.5
        0.5f, 0.4f, 0.1f,   // y = 1: 0.5 - 0.4 =  0.1
        0.2f, 0.5f, 0.3f,   // y = 1: 0.3 - 0.5 = -0.2
    };
    std::vector<int64_t> counts;
    const std::vector<double> m = faal_class_margins(probs, {0, 0, 1, 1}, 3, counts);
    CHECK(m[0] == Approx(0.0).margin(1e-7));
    CHECK(m[1] == Approx(-0.05).epsilon(1e-6));
    CHECK(m[2] == -1.0);
    CHECK(counts == std::vector<int64_t>{2, 2, 0});
    CHECK_THROWS_WITH(faal_class_margins(probs, {0, 0, 1, 3}, 3, counts), Catch::Contains("label 3"));
    CHECK_THROWS_WITH(faal_class_margins(probs, {0, 0, 1}, 3, counts), Catch::Contains("probabilities"));
}

TEST_CASE("faal: the weights maximise the code's batch-count objective sum_k n_k p_k l_k (K = 2, by hand)",
          "[fair][faal]") {
    // Class 0: three samples of margin 0.2; class 1: one of margin 0.5. With the counts c = (0.6, 0.5): class 0
    // carries the larger term, p_0 = (1 + sqrt(1 - e^-1))/2 = 0.8975300 at r = 0.5 and the weights K·p are
    // (1.7950601, 0.2049399). Counting every class once, c = (0.2, 0.5): the other way round.
    const std::vector<float> probs = {0.4f, 0.6f, 0.4f, 0.6f, 0.4f, 0.6f,    // y = 0: 0.6 - 0.4 = 0.2
                                      0.75f, 0.25f};                          // y = 1: 0.75 - 0.25 = 0.5
    const std::vector<int32_t> labels = {0, 0, 0, 1};
    MethodOptions o;
    Faal counted(FaalLoss::At, o);
    const std::vector<double> w = counted.class_weights(probs, labels, 2);
    CHECK(w[0] == Approx(1.7950601).epsilon(1e-6));
    CHECK(w[1] == Approx(0.2049399).epsilon(1e-5));
    const auto state = counted.class_state();
    CHECK(state[0] == w);
    CHECK(state[1][0] == Approx(0.2).epsilon(1e-6));
    CHECK(state[1][1] == Approx(0.5).epsilon(1e-6));
    o.faal.batch_counts = false;
    Faal once(FaalLoss::At, o);
    const std::vector<double> v = once.class_weights(probs, labels, 2);
    CHECK(v[0] == Approx(0.2049399).epsilon(1e-5));
    CHECK(v[1] == Approx(1.7950601).epsilon(1e-6));
}
