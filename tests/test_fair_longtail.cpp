// The long-tail remedies of docs/protocols/longtail.md on hand-computed cases: cost-sensitive and class-balanced weights, LDAM
// margins and logits, the weighted-CE per-sample terms, the cosine regulariser, the critical-class target draw, the
// DRW switch, state save/load and the option errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/ops.h"
#include "fairness/methods/critical_targets.h"
#include "fairness/methods/longtail_at.h"
#include "fairness/methods/longtail_losses.h"
#include "fairness/methods/longtail_weights.h"
#include "tests/test_train_methods_util.h"
#include "jobs/registry.h"
#include "util/flags.h"

using namespace cw;
using namespace cw::train;

namespace {

void require_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-9) {
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) {
        INFO("entry " << k);
        REQUIRE(got[k] == Approx(want[k]).margin(tol));
    }
}

ClassStats stats_with(const std::vector<int64_t>& correct, const std::vector<int64_t>& seen) {
    ClassStats s(static_cast<int>(seen.size()));
    s.correct = correct;
    s.seen = seen;
    return s;
}

}  // namespace

TEST_CASE("longtail: cost-sensitive weights (1 - r_k)^p normalised to sum C; critical-class weights", "[fair]") {
    // (0.8, 0.5, 0.1) / 1.4 * 3
    require_close(cost_sensitive_weights({0.2, 0.5, 0.9}, 1.0), {2.4 / 1.4, 1.5 / 1.4, 0.3 / 1.4});
    // (0.64, 0.25, 0.01) / 0.9 * 3
    require_close(cost_sensitive_weights({0.2, 0.5, 0.9}, 2.0), {1.92 / 0.9, 0.75 / 0.9, 0.03 / 0.9});
    require_close(cost_sensitive_weights({0.2, 0.5, 0.9}, 0.0), {1, 1, 1});
    require_close(cost_sensitive_weights({1, 1}, 1.0), {1, 1});   // nothing to weight: uniform, not 0/0
    // ω = 5 on class 1 of 4: (1, 5, 1, 1) / 8 * 4
    require_close(critical_class_weights(4, 1, 5.0), {0.5, 2.5, 0.5, 0.5});
}

TEST_CASE("longtail: class-balanced weights (1-beta)/(1-beta^n_k) normalised to sum C", "[fair]") {
    // β = 0.5, n = (1, 2): (1, 2/3) → sum 5/3 → × 2 / (5/3)
    require_close(class_balanced_weights({1, 2}, 0.5), {1.2, 0.8});
    // the closed form at β = 0.99 for several counts
    const std::vector<int64_t> n{10, 100, 1000, 0};
    std::vector<double> want;
    double total = 0;
    for (int64_t k : n) total += 0.01 / (1 - std::pow(0.99, static_cast<double>(std::max<int64_t>(k, 1))));
    for (int64_t k : n) want.push_back(4 * 0.01 / (1 - std::pow(0.99, static_cast<double>(std::max<int64_t>(k, 1)))) / total);
    require_close(class_balanced_weights(n, 0.99), want, 1e-9);
    // β close to 1, equal counts: uniform; fewer robust samples → larger weight
    require_close(class_balanced_weights({4000, 4000, 4000}, 0.9999), {1, 1, 1});
    const auto w = class_balanced_weights({1000, 4000}, 0.9999);
    REQUIRE(w[0] > w[1]);
}

TEST_CASE("longtail: LDAM margins are proportional to n_k^(-1/4) with max = the flag", "[fair]") {
    // n^(1/4) = 2, 3, 4 → Δ ∝ 1/2, 1/3, 1/4, scaled so the largest is 0.5
    require_close(ldam_margins({16, 81, 256}, 0.5), {0.5, 0.5 * 2 / 3, 0.25});
    require_close(ldam_margins({256, 16}, 2.0), {1.0, 2.0});
    require_close(ldam_margins({0, 16}, 1.0), {1.0, 0.5});   // no robust sample counts as 1
}

TEST_CASE("longtail: weighted CE per-sample terms w_y CE_i / sum w_y sum to the weighted loss; LDAM logits", "[fair]") {
    const std::vector<float> z{2, 0, -1, 0.5f, 1.5f, 0, -1, 0, 3};
    const Tensor logits = Tensor::from_vector(z, {3, 3});
    const std::vector<int32_t> y{0, 2, 2};
    const Tensor labels = Tensor::from_labels(y);
    const std::vector<double> w{0.5, 2.0, 0.5};
    const std::vector<float> terms = weighted_ce_terms(logits, labels, y, w).to_vector();
    double num = 0, den = 0;
    for (size_t i = 0; i < 3; ++i) {
        double lse = 0;
        for (size_t k = 0; k < 3; ++k) lse += std::exp(z[i * 3 + k]);
        const double ce = std::log(lse) - z[i * 3 + static_cast<size_t>(y[i])];
        num += w[static_cast<size_t>(y[i])] * ce;
        den += w[static_cast<size_t>(y[i])];
        REQUIRE(terms[i] == Approx(w[static_cast<size_t>(y[i])] * ce / 1.5).epsilon(1e-5));   // Σ w_y = 0.5+0.5+0.5
    }
    REQUIRE(terms[0] + terms[1] + terms[2] == Approx(num / den).epsilon(1e-5));

    // z̃_{i,y_i} = z − Δ_{y_i}, then × s
    const std::vector<float> m = ldam_logits(logits, y, {0.5, 0.25, 0.125}, 2.f).to_vector();
    const std::vector<float> want{2 * 1.5f, 0, -2, 1, 3, -2 * 0.125f, -2, 0, 2 * 2.875f};
    for (size_t k = 0; k < want.size(); ++k) REQUIRE(m[k] == Approx(want[k]).margin(1e-6));
}

TEST_CASE("longtail: cosine regulariser over batch class means, hinge at 0, ordered pairs of present classes", "[fair]") {
    // class means: μ0 = (1,0,0) (from (2,0,0) and (0,0,0)), μ1 = (1,1,0), μ2 = (−1,0,0); class 3 absent.
    // cos(0,1) = 1/√2, cos(0,2) = −1 → 0, cos(1,2) = −1/√2 → 0; 6 ordered pairs → R = 2/√2 / 6.
    const Tensor logits = Tensor::from_vector({2, 0, 0, 0, 0, 0, 1, 1, 0, -1, 0, 0}, {4, 3});
    std::vector<double> rows;
    const double r = cosine_regulariser(logits, {0, 0, 1, 2}, 4, &rows).item();
    REQUIRE(r == Approx(std::sqrt(2.0) / 6).epsilon(1e-5));
    require_close(rows, {0.5 / std::sqrt(2.0), 0.5 / std::sqrt(2.0), 0, -1}, 1e-6);
    // one class only: nothing to separate
    REQUIRE(cosine_regulariser(logits, {1, 1, 1, 1}, 4).item() == 0.0);
    REQUIRE_THROWS_WITH(cosine_regulariser(logits, {0, 0, 5, 1}, 4), Catch::Matchers::Contains("label 5"));
}

TEST_CASE("longtail: critical-class targets never equal the label; fraction targeted ≈ p_t", "[fair]") {
    Rng rng(21);
    std::vector<int32_t> labels;
    for (int i = 0; i < 10000; ++i) labels.push_back(i % 5);
    const std::vector<int32_t> t = draw_critical_targets(labels, 2, 0.5f, rng);
    REQUIRE(t.size() == labels.size());
    int64_t eligible = 0, hit = 0;
    for (size_t i = 0; i < t.size(); ++i) {
        REQUIRE(t[i] != labels[i]);
        REQUIRE((t[i] == -1 || t[i] == 2));
        if (labels[i] == 2) continue;
        ++eligible;
        hit += t[i] == 2;
    }
    const double f = static_cast<double>(hit) / static_cast<double>(eligible);
    const double sigma = std::sqrt(0.25 / static_cast<double>(eligible));   // binomial, p = 0.5
    INFO("fraction targeted " << f);
    REQUIRE(std::abs(f - 0.5) < 4 * sigma);
    Rng none(1);
    for (int32_t v : draw_critical_targets(labels, 2, 0.f, none)) REQUIRE(v == -1);
}

TEST_CASE("longtail: LDAM-DRW keeps uniform weights before the DRW epoch and class-balanced weights from it", "[fair]") {
    cw_train_test::QuietAttacks quiet;
    MethodOptions o;
    o.longtail.drw_epoch = 2;
    o.longtail.cb_beta = 0.999f;   // CB weights far from uniform at these counts (0.5 would give ≈ 1 each)
    LongTailAt m(LongTailKind::LdamDrw, o);
    Rng init(1);
    auto net = cw_train_test::tiny_net(init, 3);
    const ClassStats s = stats_with({16, 81, 256}, {300, 300, 300});
    for (int64_t e = 0; e < 4; ++e) {
        m.end_epoch({e, s, *net});
        m.start_epoch({e + 1, *net});
        INFO("epoch " << e + 1);
        require_close(m.margins(), {0.5, 0.5 * 2 / 3, 0.25});
        if (e + 1 < 2) require_close(m.weights(), {1, 1, 1});
        else require_close(m.weights(), class_balanced_weights({16, 81, 256}, 0.999f));
    }
    // the default DRW epoch is 80% of the run
    MethodOptions d;
    d.longtail.run_epochs = 10;
    REQUIRE(LongTailAt(LongTailKind::LdamDrw, d).drw_epoch() == 8);
    REQUIRE_THROWS_WITH(make_method("at_ldam_drw", MethodOptions{}), Catch::Matchers::Contains("--drw-epoch"));
}

TEST_CASE("longtail: each method's class state from the previous epoch, and save/load", "[fair]") {
    cw_train_test::QuietAttacks quiet;
    Rng init(1);
    auto net = cw_train_test::tiny_net(init, 3);
    const ClassStats s = stats_with({60, 150, 270}, {300, 300, 300});   // r = 0.2, 0.5, 0.9
    MethodOptions o;
    LongTailAt cs(LongTailKind::CostSensitive, o);
    cs.end_epoch({0, s, *net});
    cs.start_epoch({1, *net});
    REQUIRE(cs.class_state_names() == std::vector<std::string>{"weight", "robust_acc"});
    require_close(cs.class_state()[0], cost_sensitive_weights({0.2, 0.5, 0.9}, 1.0));
    require_close(cs.class_state()[1], {0.2, 0.5, 0.9});

    LongTailAt cb(LongTailKind::ClassBalanced, o);
    cb.end_epoch({0, s, *net});
    cb.start_epoch({1, *net});
    require_close(cb.class_state()[0], class_balanced_weights({60, 150, 270}, 0.9999), 1e-9);
    require_close(cb.class_state()[1], {60, 150, 270});

    o.longtail.critical_class = 1;
    o.longtail.critical_weight = 5;
    LongTailAt critical(LongTailKind::CostSensitive, o);
    critical.end_epoch({0, s, *net});
    critical.start_epoch({1, *net});
    require_close(critical.weights(), {3.0 / 7, 15.0 / 7, 3.0 / 7});

    // resume: a fresh method loaded from the saved state has the same weights and statistics
    std::map<std::string, Tensor> tensors;
    nn::Metadata meta;
    cs.save_state(tensors, meta);
    LongTailAt back(LongTailKind::CostSensitive, MethodOptions{});
    back.load_state(tensors, meta);
    REQUIRE(back.class_state() == cs.class_state());   // exactly: recomputed from the saved counts
    tensors.erase("n_seen");
    LongTailAt broken(LongTailKind::CostSensitive, MethodOptions{});
    REQUIRE_THROWS_WITH(broken.load_state(tensors, meta), Catch::Matchers::Contains("'n_seen' missing"));
}

TEST_CASE("longtail: registry names, option errors and flags", "[fair]") {
    MethodOptions o;
    o.longtail.drw_epoch = 3;
    o.longtail.critical_class = 0;
    for (const std::string n : {"at_cost_sensitive", "at_class_balanced", "at_ldam_drw", "at_cosine_reg", "at_target_class"}) {
        const std::string d = make_method(n, o)->describe();
        INFO(d);
        REQUIRE(d.rfind(n + ":", 0) == 0);
        REQUIRE(make_method(n, o)->clean_forward_after_step() == CleanForward::Train);
    }
    REQUIRE(make_method("at_ldam_drw", o)->describe().find("untested") != std::string::npos);
    REQUIRE(make_method("at_class_balanced", o)->describe().find("our proposal") != std::string::npos);
    REQUIRE(make_method("at_cosine_reg", o)->describe().find("formula ours") != std::string::npos);
    REQUIRE_THROWS_WITH(make_method("at_target_class", MethodOptions{}), Catch::Matchers::Contains("--critical-class"));
    MethodOptions bad;
    bad.longtail.cb_beta = 1.f;
    REQUIRE_THROWS_WITH(make_method("at_class_balanced", bad), Catch::Matchers::Contains("--cb-beta must be in (0, 1)"));

    cli::FlagSet app{"t"};
    MethodOptions f;
    add_method_flags(app, f);
    const char* argv[] = {"t", "--cs-power", "2", "--critical-class", "3", "--critical-weight", "5", "--cb-beta", "0.99",
                          "--ldam-max-margin", "1.5", "--drw-epoch", "7", "--cos-lambda", "0.01", "--target-prob", "0.25"};
    app.parse(static_cast<int>(sizeof argv / sizeof *argv), argv);
    REQUIRE(f.longtail.cs_power == 2.f);
    REQUIRE(f.longtail.critical_class == 3);
    REQUIRE(f.longtail.critical_weight == 5.f);
    REQUIRE(f.longtail.cb_beta == 0.99f);
    REQUIRE(f.longtail.ldam_max_margin == 1.5f);
    REQUIRE(f.longtail.drw_epoch == 7);
    REQUIRE(f.longtail.cos_lambda == 0.01f);
    REQUIRE(f.longtail.target_prob == 0.25f);
}
