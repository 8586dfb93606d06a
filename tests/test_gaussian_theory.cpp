// FRL §3's closed forms (datasets/gaussian_theory.h) against the reference values of docs/protocols/gaussian_theory.md §5,
// its brute-force and Monte Carlo checks (§6), an ε₀ ≠ ε case, and the admissibility rules.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>

#include "datasets/gaussian_mixture.h"
#include "engine/rng.h"
#include "datasets/gaussian_theory.h"

using namespace cw::fairness;

namespace {

GaussianTheoryParams preset(const std::string& name) {
    const cw::data::GaussianPreset g = cw::data::gaussian_preset(name);
    return {g.params, g.eps_train, g.eps_test};
}

void check_relative(double got, double want, double tol = 1e-5) {
    INFO("got " << got << ", want " << want);
    CHECK(std::fabs(got - want) <= tol * std::fabs(want));
}

// The sweeps on the page print 4-5 significant digits: match to half a unit of the last digit printed.
void check_printed(double got, const std::string& printed) {
    const double want = std::strtod(printed.c_str(), nullptr);
    const size_t e = printed.find_first_of("eE");
    const std::string mantissa = printed.substr(0, e);
    const size_t dot = mantissa.find('.');
    const int decimals = dot == std::string::npos ? 0 : int(mantissa.size() - dot - 1);
    const int exponent = e == std::string::npos ? 0 : std::atoi(printed.c_str() + e + 1);
    const double half_unit = 0.5 * std::pow(10.0, exponent - decimals);
    INFO("got " << got << ", the page prints " << printed);
    CHECK(std::fabs(got - want) <= half_unit * (1 + 1e-9));
}

double sum2(const ClassErrors& e) { return e.error[0] + e.error[1]; }

// The page's bias search (§6.1): a 2001-point grid over ±(μ + 10Kσ‖w‖), then golden-section refinement around the
// best grid point. Returns the minimising b; `total` receives the minimum.
double brute_force_bias(const GaussianTheoryParams& p, double a, double c, double t, double* total) {
    const cw::data::GaussianMixtureParams& g = p.data;
    const LinearSummary f0 = block_classifier(a, c, 0, g);
    auto loss = [&](double b) {
        LinearSummary f = f0;
        f.b = b;
        return sum2(classwise_errors(g, f, t));
    };
    const double range = f0.mu + 10 * g.K * g.sigma * f0.l2, h = 2 * range / 2000;
    double best = -range;
    for (int i = 0; i <= 2000; ++i) {
        const double b = -range + i * h;
        if (loss(b) < loss(best)) best = b;
    }
    double lo = best - h, hi = best + h;
    const double r = (std::sqrt(5.0) - 1) / 2;
    for (int it = 0; it < 200 && hi - lo > 1e-12 * (1 + std::fabs(best)); ++it) {
        const double x1 = hi - r * (hi - lo), x2 = lo + r * (hi - lo);
        if (loss(x1) < loss(x2)) hi = x2;
        else lo = x1;
    }
    const double b = (lo + hi) / 2;
    if (total) *total = loss(b);
    return b;
}

// Spec §6.2: scan w = (1, ρ) over ρ ∈ [0, 2η/γ] (201 values) with the best bias for each; returns the index of
// the best ρ and the minimal total error at radius t.
int best_direction(const GaussianTheoryParams& p, double t, double* total) {
    int best = -1;
    for (int i = 0; i <= 200; ++i) {
        const double rho = 2 * p.data.eta / p.data.gamma * i / 200;
        double v = 0;
        brute_force_bias(p, 1.0, rho, t, &v);
        if (best < 0 || v < *total) {
            best = i;
            *total = v;
        }
    }
    return best;
}

}  // namespace

TEST_CASE("gaussian theory: the reference values G1, G2, G3 to relative 1e-5", "[gaussian]") {
    struct Row {
        const char* quantity;
        double g1, g2, g3;
        std::function<double(const GaussianTheoryParams&)> value;
    };
    auto t1 = [](const GaussianTheoryParams& p) { return theorem1(p); };
    auto t2 = [](const GaussianTheoryParams& p) { return theorem2(p); };
    const Row rows[] = {
        {"q(K)", 0.462098, 0.462098, 0.462098, [](auto& p) { return constants(p).q; }},
        {"S", 20, 20, 4.4, [](auto& p) { return constants(p).S; }},
        {"A", 2.98142, 1.49071, 1.39841, [](auto& p) { return constants(p).A; }},
        {"B", 1.05409, 0.527046, 0.666667, [](auto& p) { return constants(p).B; }},
        {"b_nat", 5.9823, 4.02493, 0.810243, [](auto& p) { return b_nat(p); }},
        {"b_adv", 0.400593, -2.54693, -0.475168, [](auto& p) { return b_adv(p); }},
        {"Z_nat(f,-1)", -3.13445, -1.78607, -1.71135, [&](auto& p) { return t1(p).clean.z[0]; }},
        {"Z_nat(f,+1)", -2.90491, -1.34303, -1.24194, [&](auto& p) { return t1(p).clean.z[1]; }},
        {"R_nat(f,-1)", 0.000860875, 0.0370442, 0.0435083, [&](auto& p) { return t1(p).clean.error[0]; }},
        {"R_nat(f,+1)", 0.0018368, 0.0896304, 0.107129, [&](auto& p) { return t1(p).clean.error[1]; }},
        {"Z_rob(f,-1)", 9.16392, 4.36312, 0.195576, [&](auto& p) { return t1(p).robust.z[0]; }},
        {"Z_rob(f,+1)", 3.24428, 1.73156, -0.28848, [&](auto& p) { return t1(p).robust.z[1]; }},
        {"R_rob(f,-1)", 1.00000, 0.999994, 0.577529, [&](auto& p) { return t1(p).robust.error[0]; }},
        {"R_rob(f,+1)", 0.999411, 0.958324, 0.38649, [&](auto& p) { return t1(p).robust.error[1]; }},
        {"Z_nat(f_adv,-1)", -3.0356, -1.98384, -2.23758, [&](auto& p) { return t2(p).clean.z[0]; }},
        {"Z_nat(f_adv,+1)", -1.64448, -0.589217, -0.881208, [&](auto& p) { return t2(p).clean.z[1]; }},
        {"R_nat(f_adv,-1)", 0.00120029, 0.0236366, 0.0126241, [&](auto& p) { return t2(p).clean.error[0]; }},
        {"R_nat(f_adv,+1)", 0.0500387, 0.277858, 0.189103, [&](auto& p) { return t2(p).clean.error[1]; }},
        {"Z_rob(f_adv,-1)", -1.45446, -1.19327, -1.23758, [&](auto& p) { return t2(p).robust.z[0]; }},
        {"Z_rob(f_adv,+1)", -0.853909, -0.193932, -0.381208, [&](auto& p) { return t2(p).robust.z[1]; }},
        {"R_rob(f_adv,-1)", 0.0729094, 0.116381, 0.107935, [&](auto& p) { return t2(p).robust.error[0]; }},
        {"R_rob(f_adv,+1)", 0.196578, 0.423114, 0.351524, [&](auto& p) { return t2(p).robust.error[1]; }},
        {"Omega", 50.0434, 4.83437, 2.77393, [](auto& p) { return omega(p); }},
    };
    for (const Row& r : rows) {
        const double want[3] = {r.g1, r.g2, r.g3};
        const char* names[3] = {"G1", "G2", "G3"};
        for (int i = 0; i < 3; ++i) {
            INFO(r.quantity << " at " << names[i]);
            check_relative(r.value(preset(names[i])), want[i]);
        }
    }
}

TEST_CASE("gaussian theory: the d and K sweeps of the page, to the digits printed", "[gaussian]") {
    SECTION("d sweep (G1 otherwise): the natural gap shrinks with d, f_adv does not depend on d") {
        struct D {
            int d;
            const char *nat_minus, *nat_plus, *omega;
        };
        for (const D& s : {D{0, "0.010118", "0.02268", "3.888"}, D{10, "0.0098645", "0.022093", "3.994"},
                           D{100, "0.0078599", "0.017475", "5.08"}, D{1000, "0.00086087", "0.0018368", "50.04"},
                           D{10000, "8.446e-13", "1.7124e-12", "5.628e10"}}) {
            GaussianTheoryParams p = preset("G1");
            p.data.d = s.d;
            INFO("d = " << s.d);
            const TheoremErrors nat = theorem1(p), adv = theorem2(p);
            check_printed(nat.clean.error[0], s.nat_minus);
            check_printed(nat.clean.error[1], s.nat_plus);
            check_printed(adv.clean.error[0], "0.0012003");
            check_printed(adv.clean.error[1], "0.050039");
            check_printed(omega(p), s.omega);
        }
    }
    SECTION("K sweep (G2 otherwise)") {
        struct Ks {
            double K;
            const char *nat_m, *nat_p, *adv_m, *adv_p, *rob_m, *rob_p, *omega;
        };
        for (const Ks& s : {Ks{1.01, "0.012967", "0.013117", "0.056647", "0.059016", "0.21389", "0.21759", "15.78"},
                            Ks{1.5, "0.027229", "0.04463", "0.037946", "0.17753", "0.16244", "0.34539", "8.021"},
                            Ks{3, "0.040951", "0.1812", "0.011506", "0.38348", "0.069081", "0.48691", "2.652"}}) {
            GaussianTheoryParams p = preset("G2");
            p.data.K = s.K;
            INFO("K = " << s.K);
            const TheoremErrors nat = theorem1(p), adv = theorem2(p);
            check_printed(nat.clean.error[0], s.nat_m);
            check_printed(nat.clean.error[1], s.nat_p);
            check_printed(adv.clean.error[0], s.adv_m);
            check_printed(adv.clean.error[1], s.adv_p);
            check_printed(adv.robust.error[0], s.rob_m);
            check_printed(adv.robust.error[1], s.rob_p);
            check_printed(omega(p), s.omega);
        }
    }
}

TEST_CASE("gaussian theory: the theorems are the generic formula at the optimal classifiers", "[gaussian]") {
    for (const char* name : {"G1", "G2", "G3"}) {
        INFO(name);
        const GaussianTheoryParams p = preset(name);
        const TheoremErrors nat = theorem1(p), adv = theorem2(p);
        const ClassErrors nat_clean = classwise_errors(p.data, natural_optimum(p), 0);
        const ClassErrors nat_rob = classwise_errors(p.data, natural_optimum(p), p.eps0);
        const ClassErrors adv_clean = classwise_errors(p.data, adversarial_optimum(p), 0);
        const ClassErrors adv_rob = classwise_errors(p.data, adversarial_optimum(p), p.eps0);
        for (int k = 0; k < 2; ++k) {
            CHECK(nat.clean.z[k] == Approx(nat_clean.z[k]).epsilon(1e-12));
            CHECK(nat.robust.z[k] == Approx(nat_rob.z[k]).epsilon(1e-12));
            CHECK(adv.clean.z[k] == Approx(adv_clean.z[k]).epsilon(1e-12));
            CHECK(adv.robust.z[k] == Approx(adv_rob.z[k]).epsilon(1e-12));
        }
        // The qualitative facts: class +1 (the noisier one) has the larger clean error, and AT widens the gap.
        CHECK(nat.clean.error[1] > nat.clean.error[0]);
        CHECK(adv.clean.error[1] > adv.clean.error[0]);
        CHECK(omega(p) > 1);
        // The generic formula takes any w: a non-uniform w with the same μ, ‖w‖₂, ‖w‖₁ gives the same errors.
        LinearClassifier f{std::vector<double>(p.data.dim(), 0.0), b_adv(p)};
        for (int j = 0; j < p.data.m; ++j) f.w[j] = 1.0;
        const ClassErrors same = classwise_errors(p.data, summarise(f, p.data), p.eps0);
        CHECK(same.error[0] == Approx(adv_rob.error[0]).epsilon(1e-12));
        CHECK(same.error[1] == Approx(adv_rob.error[1]).epsilon(1e-12));
    }
}

TEST_CASE("gaussian theory: test radius eps0 different from the training radius eps", "[gaussian]") {
    // Expected values from G1's z-scores (§5) plus the robust shift of each optimum, by hand:
    // f_adv moves by √m·ε₀/σ_y, f by ε₀(mγ + dη)/(σ_y√S) = ε₀·110/√20 for G1.
    GaussianTheoryParams p = preset("G1");
    p.eps0 = 0.25;
    const TheoremErrors nat = theorem1(p), adv = theorem2(p);
    check_relative(adv.robust.z[0], -3.0356 + std::sqrt(10.0) * 0.25);
    check_relative(adv.robust.z[1], -1.64448 + std::sqrt(10.0) * 0.25 / 2);
    check_relative(nat.robust.z[0], -3.13445 + 0.25 * 110 / std::sqrt(20.0));
    check_relative(nat.robust.z[1], -2.90491 + 0.25 * 110 / std::sqrt(20.0) / 2);
    // Training radius changes f_adv; the clean errors do not depend on ε₀.
    check_relative(adv.clean.z[0], -3.0356);
    check_relative(adv.clean.z[1], -1.64448);
    CHECK(adv.robust.error[0] == Approx(classwise_errors(p.data, adversarial_optimum(p), 0.25).error[0]).epsilon(1e-12));
    // ε₀ = 0: robust = clean. ε₀ > ε is allowed (and only raises the robust errors).
    p.eps0 = 0;
    CHECK(theorem2(p).robust.error[1] == theorem2(p).clean.error[1]);
    CHECK(theorem1(p).robust.error[0] == theorem1(p).clean.error[0]);
    p.eps0 = 0.8;
    CHECK(theorem2(p).robust.error[1] > theorem2(preset("G1")).robust.error[1]);
    // A different training radius with the same test radius: ε = 0.3 (still η <= ε < γ).
    GaussianTheoryParams q = preset("G1");
    q.eps = 0.3;
    const double B = 2 * std::sqrt(10.0) * 0.7 / 3;   // 2√m(γ - ε)/(σ(K² - 1))
    check_relative(constants(q).B, B);
    check_relative(theorem2(q).clean.z[0], B - 2 * std::sqrt(B * B + 2 * std::log(2.0) / 3) - std::sqrt(10.0) * 0.3);
    check_relative(theorem2(q).robust.z[0], theorem2(q).clean.z[0] + std::sqrt(10.0) * 0.5);
}

TEST_CASE("gaussian theory: inadmissible parameters are rejected with one line naming the condition", "[gaussian]") {
    struct Bad {
        std::function<void(GaussianTheoryParams&)> change;
        std::string says;
    };
    const Bad cases[] = {
        {[](auto& p) { p.data.K = 1; }, "need K > 1"},
        {[](auto& p) { p.data.K = 0.5; }, "need K > 1"},
        {[](auto& p) { p.data.K = std::nan(""); }, "need K > 1"},
        {[](auto& p) { p.data.m = 0; }, "need m >= 1"},
        {[](auto& p) { p.data.d = -1; }, "need d >= 0"},
        {[](auto& p) { p.data.sigma = 0; }, "need sigma > 0"},
        {[](auto& p) { p.data.eta = 0; }, "need 0 < eta <= eps < gamma, got eta = 0"},
        {[](auto& p) { p.eps = 0.05; }, "need 0 < eta <= eps < gamma, got eta = 0.1 > eps = 0.05"},
        {[](auto& p) { p.eps = 1.0; }, "need 0 < eta <= eps < gamma, got eps = 1 >= gamma = 1"},
        {[](auto& p) { p.eps0 = -0.1; }, "need eps0 >= 0"},
    };
    for (const Bad& c : cases) {
        GaussianTheoryParams p = preset("G1");
        c.change(p);
        INFO("expected: " << c.says);
        std::string message;
        try {
            theorem2(p);
        } catch (const std::invalid_argument& e) {
            message = e.what();
        }
        CHECK(message.find(c.says) != std::string::npos);
        CHECK(message.rfind("gaussian theory: ", 0) == 0);
        CHECK(message.find('\n') == std::string::npos);
        CHECK_THROWS_AS(theorem1(p), std::invalid_argument);
        CHECK_THROWS_AS(omega(p), std::invalid_argument);
    }
    // The boundary η = ε is admissible (the attack exactly cancels a non-robust feature).
    GaussianTheoryParams edge = preset("G1");
    edge.eps = edge.data.eta;
    CHECK_NOTHROW(theorem2(edge));
    // The generic formula has its own one-line errors.
    CHECK_THROWS_WITH(classwise_errors(edge.data, block_classifier(0, 0, 1, edge.data), 0), Catch::Contains("w = 0"));
    CHECK_THROWS_WITH(classwise_errors(edge.data, block_classifier(1, 0, 1, edge.data), -1), Catch::Contains("t >= 0"));
}

TEST_CASE("gaussian theory: brute-force minimisation of the generic formula finds the closed forms", "[gaussian]") {
    struct Expect {
        const char* name;
        double b_nat, clean_total, robust_total;   // §6.1 and §6.2 of the page
    };
    for (const Expect& e : {Expect{"G1", 5.982301, 0.00269767, 0.26948716}, Expect{"G2", 4.024930, 0.12667461, 0.53949544},
                            Expect{"G3", 0.810243, 0.15063711, 0.45945963}}) {
        INFO(e.name);
        const GaussianTheoryParams p = preset(e.name);
        // Bias, with w = θ.
        double total = 0;
        const double b = brute_force_bias(p, p.data.gamma, p.data.eta, 0, &total);
        CHECK(b == Approx(b_nat(p)).epsilon(1e-6));
        check_relative(b, e.b_nat, 1e-6);
        // Direction (and bias) for clean error: optimum at ρ = η/γ, index 100 of the 201-point scan.
        CHECK(best_direction(p, 0, &total) == 100);
        check_relative(total, e.clean_total, 1e-6);
        check_relative(total, sum2(theorem1(p).clean), 1e-6);
        // Robust error at t = ε: optimum at ρ = 0 with bias b_adv.
        CHECK(best_direction(p, p.eps, &total) == 0);
        check_relative(total, e.robust_total, 1e-6);
        check_relative(brute_force_bias(p, 1.0, 0.0, p.eps, nullptr), b_adv(p), 1e-6);
        GaussianTheoryParams at_eps = p;
        at_eps.eps0 = p.eps;
        check_relative(total, sum2(theorem2(at_eps).robust), 1e-6);
    }
}

TEST_CASE("gaussian theory: Monte Carlo on G3 agrees with the closed forms within 3 standard errors", "[gaussian]") {
    const GaussianTheoryParams p = preset("G3");
    cw::Rng rng(2024);
    const int64_t n = 60000;
    const cw::data::GaussianSamples s = cw::data::sample_gaussian_mixture_per_class(p.data, n, rng);
    struct Model {
        const char* name;
        double a, c, b;
        TheoremErrors theory;
    };
    for (const Model& m : {Model{"natural", p.data.gamma, p.data.eta, b_nat(p), theorem1(p)},
                           Model{"adversarial", 1.0, 0.0, b_adv(p), theorem2(p)}}) {
        INFO(m.name);
        std::array<int64_t, 2> clean{}, robust{};
        const double l1 = std::fabs(m.a) * p.data.m + std::fabs(m.c) * p.data.d;
        for (int64_t i = 0; i < s.n; ++i) {
            double score = m.b;
            for (int j = 0; j < s.dim; ++j) score += (j < p.data.m ? m.a : m.c) * s.x[i * s.dim + j];
            const int y = cw::data::class_sign(s.labels[i]);
            // The worst L∞ perturbation δ = -y·ε₀·sign(w) moves the score by -y·ε₀‖w‖₁.
            clean[s.labels[i]] += y * score <= 0;
            robust[s.labels[i]] += y * (score - y * p.eps0 * l1) <= 0;
        }
        for (int k = 0; k < 2; ++k) {
            for (auto [count, want] : {std::pair{clean[k], m.theory.clean.error[k]}, {robust[k], m.theory.robust.error[k]}}) {
                const double got = double(count) / n, se = std::sqrt(want * (1 - want) / n);
                INFO("class " << k << ": Monte Carlo " << got << ", closed form " << want);
                CHECK(std::fabs(got - want) <= 3 * se);
            }
        }
    }
}
