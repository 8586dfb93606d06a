// The documented rules of the baseline methods on cases built by hand (docs/protocols/training.md §6–§9): TRADES' KL term and its
// CFA-normalised form, MART's boosted CE and weighted KL, FAT's early stop in both semantics, FGSM-RS's
// catastrophic-overfitting guard, the registry and flags; and each method training a tiny synthetic problem.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include "attacks/steps.h"
#include "tests/test_train_methods_util.h"
#include "train/methods/family.h"
#include "train/methods/fat.h"
#include "train/methods/fgsm_rs.h"
#include "train/methods/mart.h"
#include "train/methods/method_util.h"
#include "jobs/registry.h"
#include "train/methods/trades.h"
#include "util/flags.h"

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

TEST_CASE("trades: the inner step ascends KL(p(x) || p(x')), not KL(p(x') || p(x)) — a point where their signs differ",
          "[train]") {
    QuietAttacks quiet;
    // logits = 5·x on images [1, 3, 1, 1]; x = (0, 1, 0.5), the start x' = (0.8, 0.4, 0.8). With p = softmax(5x),
    // q = softmax(5x'): ∇_{x'} KL(p ‖ q) = 5(q − p) = 5·(0.462, −0.855, 0.393)  → signs (+, −, +);
    // ∇_{x'} KL(q ‖ p) = 5·q ⊙ (log q − log p − KL(q ‖ p)) = 5·(0.756, −0.341, −0.415) → signs (+, −, −).
    auto model = std::make_shared<nn::Lambda>([](const Tensor& x) { return mul(reshape(x, {x.size(0), x.size(1)}), 5.f); });
    MethodOptions o;
    o.eps = 1.f;      // the ball covers the box: only the sign of the step matters
    o.alpha = 0.1f;
    o.steps = 1;
    Trades trades(o);
    const Tensor x = Tensor::from_vector({0.f, 1.f, 0.5f}, {1, 3, 1, 1});
    const Tensor start = Tensor::from_vector({0.8f, 0.4f, 0.8f}, {1, 3, 1, 1});
    const std::vector<float> got = trades.adversarial(*model, x, start, {0}).to_vector();
    const std::vector<float> want{0.9f, 0.3f, 0.9f};   // the swapped direction gives (0.9, 0.3, 0.7)
    for (size_t i = 0; i < 3; ++i) REQUIRE(got[i] == Approx(want[i]).margin(1e-6));
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
std::vector<float> fat_points(attacks::FatSemantics semantics, int tau, const std::vector<float>& x, uint64_t seed,
                              const std::vector<float>& class_eps = {}, float alpha = 0.2f) {
    MethodOptions o;
    o.eps = 0.1f;
    o.alpha = alpha;   // default 2ε: the first step from anywhere in the ball lands on x + ε
    o.steps = 4;
    o.fat_semantics = semantics;
    o.fat_tau = tau;
    o.fat_omega = 0;   // no per-step noise, so the points are exact
    Fat fat(o);
    if (!class_eps.empty()) fat.set_class_eps(class_eps);
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

// The first seed from 1 whose FAT random start (U(−0.1, 0.1) around each of the three x, replayed) passes `accept`,
// and those starts.
std::pair<uint64_t, std::vector<float>> seed_with_starts(const std::vector<float>& x,
                                                         const std::function<bool(const std::vector<float>&)>& accept) {
    for (uint64_t seed = 1;; ++seed) {
        Rng replay(seed);
        const auto d = attacks::uniform_linf_noise(3, 1, {0.1f, 0.1f, 0.1f}, replay);
        const std::vector<float> start{x[0] + d[0], x[1] + d[1], x[2] + d[2]};
        if (accept(start)) return {seed, start};
    }
}

}  // namespace

TEST_CASE("fat: early stop by hand — original freezes misclassified samples once the budget is spent; cfa's counter never re-arms",
          "[train]") {
    QuietAttacks quiet;
    // A: v = 0.2, correct everywhere in its ball; B: 0.8, wrong everywhere; C: 0.45, correct at its start (the
    // seed is chosen so), wrong once stepped to 0.55.
    const std::vector<float> x{0.2f, 0.8f, 0.45f};
    const auto found = seed_with_starts(x, [](const std::vector<float>& s) { return s[2] < 0.49f; });
    const uint64_t seed = found.first;
    const std::vector<float>& start = found.second;
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
    // Cfa: τ = 0 never moves anything (random start only); τ = 1: B, wrong at its first check with counter 1,
    // still moves once (the CFA code moves while control > 0, then decrements) and lands on x + ε.
    check(S::Cfa, 0, {start[0], start[1], start[2]});
    check(S::Cfa, 1, {A, B, C});
    // Class-wise ε (CFA's CCM) reaches the attack: ε_0 = 0.05 puts A at 0.25 and B at 0.85.
    const auto narrow = fat_points(S::Original, 1, x, seed, {0.05f});
    REQUIRE(narrow[0] == Approx(0.25f).margin(1e-5));
    REQUIRE(narrow[1] == Approx(0.85f).margin(1e-5));
}

TEST_CASE("fat: cfa counter by hand — a sample moves at a check while its counter is > 0 there, so tau misclassified "
          "checks still move it (CFA / FAIR-TAT code)",
          "[train]") {
    QuietAttacks quiet;
    // α = 0.01 with ε = 0.1 and K = 4: every move shows (no sample reaches its ball's edge), so each point is its
    // start plus 0.01 per move. A: v = 0.2, correct everywhere; B: 0.8, wrong everywhere; C: x = 0.5 with a start
    // in (0.482, 0.488) (the seed is chosen so): correct at checks 0 and 1 (moves free), wrong from check 2 on.
    const std::vector<float> x{0.2f, 0.8f, 0.5f};
    const auto found = seed_with_starts(x, [](const std::vector<float>& s) {
        return s[2] > 0.482f && s[2] < 0.488f && s[1] < 0.85f && s[0] < 0.25f;
    });
    const uint64_t seed = found.first;
    const std::vector<float>& start = found.second;
    auto moved = [&](int a, int b, int c) {
        return std::vector<float>{start[0] + 0.01f * a, start[1] + 0.01f * b, start[2] + 0.01f * c};
    };
    // Counter c starts at τ; at each check: move iff c > 0, then c −= 1 if wrong.
    //   B (wrong at every check) moves at checks 0..τ−1: τ moves (of 4).
    //   C: checks 0, 1 move free; check 2 moves iff τ ≥ 1 (c = τ), check 3 iff τ ≥ 2 (c = τ − 1).
    // The decrement-first reading (c −= 1, then move iff c > 0) gives B τ − 1 moves and C 2, 2, 3, 4 for τ = 0..3:
    // τ = 3 there acts as τ = 2 here.
    const std::vector<std::vector<float>> want{moved(0, 0, 0), moved(4, 1, 3), moved(4, 2, 4), moved(4, 3, 4)};
    for (int tau = 0; tau <= 3; ++tau) {
        const auto got = fat_points(attacks::FatSemantics::Cfa, tau, x, seed, {}, 0.01f);
        for (size_t i = 0; i < 3; ++i) {
            INFO("tau " << tau << ", sample " << "ABC"[i] << ": start " << start[i] << ", got " << got[i] << ", want "
                        << want[tau][i]);
            REQUIRE(got[i] == Approx(want[tau][i]).margin(1e-5));
        }
    }
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

namespace {

// flatten → fc 4→2 with weights set by hand: z1 − z0 = 10·(Σ_j v_j − 2) · scale. Images [8, 1, 2, 2]: class 0
// pixels 0.10–0.24, class 1 0.76–0.90, so at ε = 8/255 (Σ moves ≤ 0.13) every sample is robust.
struct GuardSetup {
    std::shared_ptr<nn::Sequential> model = std::make_shared<nn::Sequential>();
    std::shared_ptr<nn::Linear> fc;
    Tensor x, y;
    std::vector<int32_t> host_y;
    GuardSetup() {
        Rng rng(1);
        fc = std::make_shared<nn::Linear>(4, 2, true, rng);
        model->add("flatten", std::make_shared<nn::Flatten>());
        model->add("fc", fc);
        std::vector<float> xv;
        for (int i = 0; i < 8; ++i) {
            host_y.push_back(i % 2);
            for (int j = 0; j < 4; ++j) xv.push_back(i % 2 ? 0.9f - 0.02f * i : 0.1f + 0.02f * i);
        }
        x = Tensor::from_vector(xv, {8, 1, 2, 2});
        y = Tensor::from_labels(host_y);
        set_scale(1.f);
    }
    void set_scale(float s) {   // s < 0 turns every prediction around
        fc->weight.copy_from(Tensor::from_vector({-5 * s, -5 * s, -5 * s, -5 * s, 5 * s, 5 * s, 5 * s, 5 * s}, {2, 4}));
        fc->bias->copy_from(Tensor::from_vector({10 * s, -10 * s}, {2}));
    }
    // One epoch as the trainer runs it: batch 0, a second batch with every label swapped (the guard must check the
    // first batch only — on this one the model is always wrong), then end_epoch.
    EpochDecision epoch(Method& m, int64_t e, Rng& rng) {
        m.batch_loss({*model, x, y, host_y, e, 0, 2, rng});
        std::vector<int32_t> swapped;
        for (int32_t v : host_y) swapped.push_back(1 - v);
        m.batch_loss({*model, x, Tensor::from_labels(swapped), swapped, e, 1, 2, rng});
        const ClassStats stats(2);
        return m.end_epoch({e, stats, *model});
    }
};

}  // namespace

TEST_CASE("fgsm_rs guard: a robust-accuracy drop beyond the threshold stops and restores the previous check's weights",
          "[train]") {
    QuietAttacks quiet;
    MethodOptions o;
    o.eps = 8.f / 255;
    o.fgsm_guard = true;
    GuardSetup g;
    FgsmRs method(o);
    Rng rng(2);
    REQUIRE_FALSE(g.epoch(method, 0, rng).stop);
    REQUIRE(method.last_check_accuracy() == 1.0);
    g.set_scale(2.f);                            // still robust: this check passes and becomes the restore point
    REQUIRE_FALSE(g.epoch(method, 1, rng).stop);
    g.set_scale(-1.f);                           // the planted collapse: robust accuracy 1 → 0
    const EpochDecision d = g.epoch(method, 2, rng);
    INFO(d.reason);
    REQUIRE(d.stop);
    REQUIRE(d.reason.find("from 1 to 0") != std::string::npos);
    const auto state = g.model->state();
    REQUIRE(d.restore_state.size() == state.size());
    for (size_t i = 0; i < state.size(); ++i) {
        INFO(state[i].name);
        GuardSetup want;
        want.set_scale(2.f);
        REQUIRE(d.restore_state[i].to_vector() == want.model->state()[i].tensor->to_vector());
    }

    // A drop of exactly the threshold does not stop ("more than"); the guard off never checks.
    o.fgsm_guard_drop = 1.f;
    GuardSetup g2;
    FgsmRs lenient(o);
    REQUIRE_FALSE(g2.epoch(lenient, 0, rng).stop);
    g2.set_scale(-1.f);
    REQUIRE_FALSE(g2.epoch(lenient, 1, rng).stop);
    REQUIRE(lenient.last_check_accuracy() == 0.0);
    o.fgsm_guard = false;
    GuardSetup g3;
    FgsmRs off(o);
    REQUIRE_FALSE(g3.epoch(off, 0, rng).stop);
    g3.set_scale(-1.f);
    REQUIRE_FALSE(g3.epoch(off, 1, rng).stop);
    REQUIRE(off.last_check_accuracy() == -1.0);
}

TEST_CASE("fgsm_rs guard: its state survives save_state / load_state", "[train]") {
    QuietAttacks quiet;
    MethodOptions o;
    o.fgsm_guard = true;
    GuardSetup g;
    FgsmRs method(o);
    Rng rng(2);
    REQUIRE_FALSE(g.epoch(method, 0, rng).stop);
    std::map<std::string, Tensor> tensors;
    nn::Metadata meta;
    method.save_state(tensors, meta);
    FgsmRs resumed(o);
    resumed.load_state(tensors, meta);
    REQUIRE(resumed.last_check_accuracy() == 1.0);
    g.set_scale(-1.f);
    const ClassStats stats(2);
    const EpochDecision d = resumed.end_epoch({1, stats, *g.model});   // the saved first batch, the saved weights
    REQUIRE(d.stop);
    GuardSetup want;
    REQUIRE(d.restore_state.size() == want.model->state().size());
    for (size_t i = 0; i < d.restore_state.size(); ++i)
        REQUIRE(d.restore_state[i].to_vector() == want.model->state()[i].tensor->to_vector());
}

TEST_CASE("train methods: a few epochs on separable blobs lower the loss; per_sample has B terms summing to the loss",
          "[train]") {
    QuietAttacks quiet;
    Rng data(9);
    std::vector<float> xv;
    std::vector<int32_t> yv;
    cw_train_test::blobs(48, data, xv, yv);
    for (const std::string& name : baseline_family().names) {
        DYNAMIC_SECTION(name) {
            MethodOptions o;
            o.eps = 8.f / 255;
            o.steps = 3;
            MethodPtr method = make_method(name, o);
            Rng init(10);
            auto net = cw_train_test::tiny_net(init);
            const std::vector<double> epoch_loss = cw_train_test::train_on_blobs(*method, *net, xv, yv,
                [&](const BatchLoss& out, const Tensor& y, const std::vector<int32_t>&) {
                    REQUIRE(out.per_sample.shape() == Shape{16});
                    REQUIRE(out.logits.shape() == Shape{16, 3});
                    if (name != "trades" && name != "mart") {
                        // The CE methods: the per-sample terms are the mean CE of the logits they report.
                        REQUIRE(sum(out.per_sample).item() ==
                                Approx(cross_entropy(out.logits, y).item()).epsilon(1e-5));
                    }
                }, false);
            INFO(name << ": mean loss per epoch " << epoch_loss.front() << " ... " << epoch_loss.back());
            REQUIRE(epoch_loss.back() < 0.7 * epoch_loss.front());
        }
    }
}

TEST_CASE("train methods: registry names, errors, descriptions and command-line flags", "[train]") {
    const auto& names = baseline_family().names;
    REQUIRE(names == std::vector<std::string>{"natural", "pgd_at", "fgsm_rs", "trades", "fat", "mart"});
    REQUIRE(std::vector<std::string>(method_names().begin(), method_names().begin() + 6) == names);
    try {
        make_method("madry", {});
        FAIL("no exception");
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        REQUIRE(what.find("'madry'") != std::string::npos);
        for (const auto& n : names) REQUIRE(what.find(n) != std::string::npos);
    }
    MethodOptions bad;
    bad.steps = 0;
    REQUIRE_THROWS_AS(make_method("pgd_at", bad), std::invalid_argument);
    MethodOptions no_start;
    no_start.random_start = false;
    REQUIRE_THROWS_AS(make_method("fat", no_start), std::invalid_argument);

    MethodOptions o;
    o.eps = 8.f / 255;
    for (const auto& n : names) {
        const std::string d = make_method(n, o)->describe();
        INFO(d);
        REQUIRE(d.rfind(n + ":", 0) == 0);
        if (n != "natural") REQUIRE(d.find("8/255 (0.031373)") != std::string::npos);
    }
    REQUIRE(make_method("pgd_at", o)->describe().find("alpha 2/255") != std::string::npos);   // 2.5·ε/10
    REQUIRE(make_method("pgd_at", o)->clean_forward_after_step() == CleanForward::Train);
    REQUIRE(make_method("trades", o)->clean_forward_after_step() == CleanForward::Off);

    cli::FlagSet app{"t"};
    MethodOptions f;
    add_method_flags(app, f);
    const char* argv[] = {"t", "--trades-form", "cfa", "--beta", "3", "--fat-semantics", "CFA", "--fat-tau", "2",
                          "--attack-mode", "eval", "--clean-forward", "off", "--fgsm-guard", "--no-random-start",
                          "--alpha", "0.01", "--attack-steps", "7"};
    app.parse(static_cast<int>(sizeof argv / sizeof *argv), argv);
    REQUIRE(f.trades_form == TradesForm::CfaNormalised);
    REQUIRE(f.beta == 3.f);
    REQUIRE(f.fat_semantics == attacks::FatSemantics::Cfa);
    REQUIRE(f.fat_tau == 2);
    REQUIRE(f.attack_mode == ModeChoice::Eval);
    REQUIRE(f.clean_forward == CleanForwardChoice::Off);
    REQUIRE(f.fgsm_guard);
    REQUIRE_FALSE(f.random_start);
    REQUIRE(f.alpha == 0.01f);
    REQUIRE(f.steps == 7);
    cli::FlagSet app2{"t"};
    MethodOptions f2;
    add_method_flags(app2, f2);
    const char* bad_argv[] = {"t", "--trades-form", "zhang"};
    REQUIRE_THROWS_WITH(app2.parse(3, bad_argv), Catch::Matchers::Contains("expected one of original|cfa, got 'zhang'"));
}
