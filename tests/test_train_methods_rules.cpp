// The spec'd rules of the baseline methods on cases built by hand (training.md §6–§9): TRADES' KL term and its
// CFA-normalised form, MART's boosted CE and weighted KL, FAT's early stop in both semantics, FGSM-RS's
// catastrophic-overfitting guard, the registry and flags; and each method training a tiny synthetic problem.
#include <catch2/catch.hpp>

#include <CLI/CLI.hpp>
#include <cmath>

#include "attacks/steps.h"
#include "tests/test_train_methods_util.h"
#include "train/methods/fat.h"
#include "train/methods/fgsm_rs.h"
#include "train/methods/mart.h"
#include "train/methods/method_util.h"
#include "train/methods/registry.h"
#include "train/methods/trades.h"

using namespace cw;
using namespace cw::train;
using cw_train_test::QuietAttacks;

namespace {

// A "model" whose logits are its input: images [B, C, 1, 1] → logits [B, C], so the logits are built by hand.
std::shared_ptr<nn::Lambda> logits_are_inputs() {
    return std::make_shared<nn::Lambda>([](const Tensor& x) { return reshape(x, {x.size(0), x.size(1)}); });
}

std::vector<double> softmax_row(const std::vector<float>& z, size_t row, size_t c) {
    double m = -1e300, s = 0;
    for (size_t k = 0; k < c; ++k) m = std::max(m, static_cast<double>(z[row * c + k]));
    std::vector<double> p(c);
    for (size_t k = 0; k < c; ++k) s += p[k] = std::exp(z[row * c + k] - m);
    for (auto& v : p) v /= s;
    return p;
}

double kl(const std::vector<double>& p, const std::vector<double>& q) {
    double s = 0;
    for (size_t k = 0; k < p.size(); ++k) s += p[k] * (std::log(p[k]) - std::log(q[k]));
    return s;
}

}  // namespace

TEST_CASE("trades: per-sample terms are (CE + beta*KL(p(x) || p(x')))/B; the CFA form is that over (1+beta)", "[train]") {
    const std::vector<float> nat{2.0f, 0.5f, -1.0f, 0.1f, 0.2f, 0.3f, -0.5f, 1.5f, 0.0f, 3.0f, -2.0f, 1.0f};
    const std::vector<float> adv{1.0f, 1.0f, -0.5f, 0.4f, -0.2f, 0.3f, 0.5f, 0.5f, 0.5f, 0.0f, 1.0f, 2.0f};
    const std::vector<int32_t> labels{0, 2, 1, 0};
    const int64_t b = 4, c = 3;
    const Tensor x = Tensor::from_vector(nat, {b, c, 1, 1}), xa = Tensor::from_vector(adv, {b, c, 1, 1});
    auto model = logits_are_inputs();
    MethodOptions o;
    o.beta = 6;
    Trades original(o);
    o.trades_form = TradesForm::CfaNormalised;
    Trades cfa(o);
    const Tensor y = Tensor::from_labels(labels);
    const std::vector<float> got = original.outer_loss(*model, x, xa, y, labels).per_sample.to_vector();
    const std::vector<float> got_cfa = cfa.outer_loss(*model, x, xa, y, labels).per_sample.to_vector();
    REQUIRE(got.size() == 4);
    for (int64_t i = 0; i < b; ++i) {
        const auto p = softmax_row(nat, i, c), q = softmax_row(adv, i, c);
        const double ce = -std::log(p[labels[i]]);
        const double want = (ce + 6 * kl(p, q)) / b;
        INFO("sample " << i << ": CE " << ce << ", KL " << kl(p, q));
        REQUIRE(got[i] == Approx(want).epsilon(1e-6));
        REQUIRE(got_cfa[i] == Approx(want / 7).epsilon(1e-6));
    }

    // Per-class β (CFA's CCR): b_i = β_{y_i}/(1+β_{y_i}).
    const std::vector<float> beta_k{1.f, 3.f, 9.f};
    cfa.set_class_beta(beta_k);
    const std::vector<float> got_k = cfa.outer_loss(*model, x, xa, y, labels).per_sample.to_vector();
    for (int64_t i = 0; i < b; ++i) {
        const auto p = softmax_row(nat, i, c), q = softmax_row(adv, i, c);
        const double bi = beta_k[labels[i]] / (1.0 + beta_k[labels[i]]);
        REQUIRE(got_k[i] == Approx(((1 - bi) * -std::log(p[labels[i]]) + bi * kl(p, q)) / b).epsilon(1e-6));
    }
}

TEST_CASE("trades: the inner loop stays in the per-class eps-ball and the box, and ascends the KL", "[train]") {
    QuietAttacks quiet;
    Rng init(3);
    auto net = cw_train_test::tiny_net(init);
    Rng data(4);
    std::vector<float> xv(4 * 3 * 8 * 8);
    data.fill_uniform(xv.data(), xv.size(), 0.f, 1.f);
    const Tensor x = Tensor::from_vector(xv, {4, 3, 8, 8});
    const std::vector<int32_t> labels{0, 1, 2, 1};
    MethodOptions o;
    o.eps = 8.f / 255;
    o.steps = 5;
    Trades trades(o);
    const std::vector<float> eps_k{8.f / 255, 2.f / 255, 4.f / 255};
    trades.set_class_eps(eps_k);
    Rng rng(5);
    const Tensor start = noisy_start(x, 0.001f, rng);
    const Tensor xa = trades.adversarial(*net, x, start, labels);
    REQUIRE(net->is_training());   // the eval-mode scope restored the mode
    const std::vector<float> a = xa.to_vector();
    for (size_t j = 0; j < a.size(); ++j) {
        const float e = eps_k[labels[j / 192]];
        REQUIRE(a[j] >= 0.f);
        REQUIRE(a[j] <= 1.f);
        REQUIRE(std::fabs(a[j] - xv[j]) <= e + 1e-6f);
    }
    net->eval();
    NoGradGuard no_grad;
    const Tensor clean = (*net)(x);
    const double kl_start = sum(kl_div(clean, (*net)(start))).item(), kl_adv = sum(kl_div(clean, (*net)(xa))).item();
    INFO("KL at the start " << kl_start << ", after 5 steps " << kl_adv);
    REQUIRE(kl_adv > 100 * kl_start);
}

TEST_CASE("mart: boosted CE uses the most likely wrong class; KL weighted by 1.0000001 - p_y", "[train]") {
    // Sample 0: the label is the argmax of p' (ŷ is the runner-up); sample 1: a wrong class leads; sample 2:
    // confident and correct.
    const std::vector<float> nat{2.0f, 0.0f, -1.0f, 0.5f, 1.5f, 0.0f, 6.0f, -3.0f, -3.0f};
    const std::vector<float> adv{3.0f, 1.0f, 2.0f, -1.0f, 0.2f, 2.5f, 1.0f, 0.5f, 0.0f};
    const std::vector<int32_t> labels{0, 1, 0};
    const std::vector<int32_t> runner_up{2, 2, 1};   // argmax_{k≠y} p', by hand
    const Tensor y = Tensor::from_labels(labels);
    const MartTerms t = mart_terms(Tensor::from_vector(nat, {3, 3}), Tensor::from_vector(adv, {3, 3}), y);
    const auto bce = t.bce.to_vector(), klv = t.kl.to_vector(), w = t.weight.to_vector();
    for (size_t i = 0; i < 3; ++i) {
        const auto p = softmax_row(nat, i, 3), q = softmax_row(adv, i, 3);
        INFO("sample " << i);
        REQUIRE(bce[i] == Approx(-std::log(q[labels[i]]) - std::log(1.0001 - q[runner_up[i]] + 1e-12)).epsilon(1e-6));
        REQUIRE(klv[i] == Approx(kl(p, q)).epsilon(1e-5));
        REQUIRE(w[i] == Approx(1.0000001 - p[labels[i]]).margin(5e-7));   // p_y near 1: a few float32 ulps (6e-8)
    }
    // The whole per-sample term with β = 5 (the default) through the method, on logits-as-inputs.
    auto model = logits_are_inputs();
    Mart mart(MethodOptions{});
    const auto per = mart.outer_loss(*model, Tensor::from_vector(nat, {3, 3, 1, 1}), Tensor::from_vector(adv, {3, 3, 1, 1}), y)
                         .per_sample.to_vector();
    for (size_t i = 0; i < 3; ++i) REQUIRE(per[i] == Approx((bce[i] + 5 * klv[i] * w[i]) / 3).epsilon(1e-6));
}

namespace {

// One pixel v per image; logits (0, 10·(v − 0.5)): class 1 iff v > 0.5. With label 0 the CE gradient pushes v up.
std::shared_ptr<nn::Lambda> threshold_model() {
    return std::make_shared<nn::Lambda>([](const Tensor& x) {
        const Tensor v = reshape(x, {x.size(0), 1});
        return concat({Tensor::zeros({x.size(0), 1}), mul(add(v, -0.5f), 10.f)}, 1);
    });
}

// x' of every sample after one FAT batch, read back from the logits the method trained on.
std::vector<float> fat_points(attacks::FatSemantics semantics, int tau, const std::vector<float>& x, uint64_t seed) {
    MethodOptions o;
    o.eps = 0.1f;
    o.alpha = 0.2f;    // 2ε: the first step from anywhere in the ball lands on x + ε
    o.steps = 4;
    o.fat_semantics = semantics;
    o.fat_tau = tau;
    o.fat_omega = 0;   // no per-step noise, so the points are exact
    Fat fat(o);
    auto model = threshold_model();
    const int64_t n = static_cast<int64_t>(x.size());
    const Tensor images = Tensor::from_vector(x, {n, 1, 1, 1});
    const std::vector<int32_t> host_y(x.size(), 0);
    const Tensor y = Tensor::from_labels(host_y);
    Rng rng(seed);
    const BatchLoss out = fat.batch_loss({*model, images, y, host_y, 0, 0, 2, rng});
    const std::vector<float> z = out.logits.to_vector();
    std::vector<float> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(z[2 * i + 1] / 10.f + 0.5f);
    return v;
}

}  // namespace

TEST_CASE("fat: early stop by hand — original freezes misclassified samples once the budget is spent; cfa's counter never re-arms",
          "[train]") {
    QuietAttacks quiet;
    // A: v = 0.2, correct everywhere in its ball; B: 0.8, wrong everywhere; C: 0.45, correct at its start (the
    // seed is chosen so), wrong once stepped to 0.55.
    const std::vector<float> x{0.2f, 0.8f, 0.45f};
    uint64_t seed = 1;
    std::vector<float> start;
    for (;; ++seed) {
        Rng replay(seed);
        const auto d = attacks::uniform_linf_noise(3, 1, {0.1f, 0.1f, 0.1f}, replay);
        start = {x[0] + d[0], x[1] + d[1], x[2] + d[2]};
        if (start[2] < 0.49f) break;
    }
    const float A = 0.3f, B = 0.9f, C = 0.55f;
    using S = attacks::FatSemantics;
    auto check = [&](S s, int tau, std::vector<float> want) {
        const auto got = fat_points(s, tau, x, seed);
        for (size_t i = 0; i < 3; ++i) {
            INFO((s == S::Original ? "original" : "cfa") << " tau " << tau << ", sample " << "ABC"[i] << ": start "
                                                          << start[i] << ", got " << got[i] << ", want " << want[i]);
            REQUIRE(got[i] == Approx(want[i]).margin(1e-5));
        }
    };
    // Original: a correct sample always moves; a wrong one spends its budget, then is frozen where it is.
    check(S::Original, 0, {A, start[1], C});
    check(S::Original, 1, {A, B, C});
    check(S::Original, 2, {A, B, C});
    // Cfa: τ = 0 never moves anything (random start only); τ = 1: B's counter dies at its first check.
    check(S::Cfa, 0, {start[0], start[1], start[2]});
    check(S::Cfa, 1, {A, start[1], C});
    check(S::Cfa, 2, {A, B, C});
}

TEST_CASE("fat: dynamic tau of the original schedule by 0-based epoch; fixed tau otherwise", "[train]") {
    MethodOptions o;
    Fat dynamic(o);
    REQUIRE(dynamic.tau(0) == 0);
    REQUIRE(dynamic.tau(49) == 0);    // epoch 50 (1-based)
    REQUIRE(dynamic.tau(50) == 1);
    REQUIRE(dynamic.tau(89) == 1);
    REQUIRE(dynamic.tau(90) == 2);
    o.fat_tau = 4;
    REQUIRE(Fat(o).tau(0) == 4);
    MethodOptions c;
    c.fat_semantics = attacks::FatSemantics::Cfa;
    REQUIRE(Fat(c).tau(120) == 3);
    REQUIRE(Fat(c).describe().find("train mode") != std::string::npos);
    REQUIRE(dynamic.describe().find("eval mode") != std::string::npos);
}
