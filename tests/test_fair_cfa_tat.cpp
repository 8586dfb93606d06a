// FAIR-TAT (docs/protocols/fair_tat.md §2, §4): the target prior by hand, draws that never hit the true class and follow the
// prior, uniform targets in epoch 0 and in the random-target ablation, ε scaling, class state and save/load.
#include <catch2/catch.hpp>

#include <cmath>

#include "fairness/methods/fair_tat.h"
#include "fairness/methods/target_prior.h"
#include "nn/layers.h"

using namespace cw;
using namespace cw::train;

namespace {

constexpr float kEps = 8.f / 255;

// 4 classes, 10 samples each. Wrong predictions: 6 go to class 0, 3 to class 1, 1 to class 2, none to class 3:
// CFP = (0.6, 0.3, 0.1, 0). Correct: 8, 6, 7, 9 per class → r = correct·4/40.
ClassStats hand_stats() {
    ClassStats s(4);
    std::vector<int32_t> y, p;
    auto add = [&](int32_t label, int32_t pred, int n) {
        for (int i = 0; i < n; ++i) {
            y.push_back(label);
            p.push_back(pred);
        }
    };
    add(0, 0, 8), add(0, 1, 2);
    add(1, 1, 6), add(1, 0, 4);
    add(2, 2, 5), add(2, 0, 2), add(2, 1, 1), add(2, 2, 2);
    add(3, 3, 1), add(3, 2, 1), add(3, 3, 8);
    s.add(y, p, {});
    return s;
}

MethodOptions options() {
    MethodOptions o;
    o.eps = kEps;
    o.steps = 2;
    return o;
}

void end_epoch(Method& m, int64_t epoch, const ClassStats& s) {
    nn::Sequential dummy;
    m.end_epoch(EpochEnd{epoch, s, dummy});
}

// Frequencies of each target over `n` draws for samples of class `label`.
std::vector<double> frequencies(FairTat& m, int32_t label, int64_t epoch, int n, Rng& rng) {
    std::vector<double> f(4, 0.0);
    for (int32_t t : m.targets(std::vector<int32_t>(static_cast<size_t>(n), label), epoch, rng)) f[static_cast<size_t>(t)] += 1;
    for (double& v : f) v /= n;
    return f;
}

// |f − p| within 4.5 binomial standard deviations of n draws.
void check_binomial(const std::vector<double>& f, const std::vector<double>& p, int n) {
    for (size_t k = 0; k < p.size(); ++k) {
        INFO("class " << k << ": frequency " << f[k] << ", probability " << p[k]);
        CHECK(std::abs(f[k] - p[k]) <= 4.5 * std::sqrt(p[k] * (1 - p[k]) / n) + 1e-12);
    }
}

}  // namespace

TEST_CASE("fair_tat: prior softmax(2*CFP) and the floored proportional prior, by hand", "[fair]") {
    const std::vector<double> cfp{0.6, 0.3, 0.1, 0.0};
    const double z = std::exp(1.2) + std::exp(0.6) + std::exp(0.2) + 1.0;
    const auto soft = target_prior(cfp, TargetPrior::Softmax, 2.0, 0.01);
    CHECK(soft[0] == Approx(std::exp(1.2) / z));
    CHECK(soft[1] == Approx(std::exp(0.6) / z));
    CHECK(soft[3] == Approx(1.0 / z));
    const auto prop = target_prior(cfp, TargetPrior::Proportional, 2.0, 0.01);
    CHECK(prop[0] == Approx(0.6 / 1.01));
    CHECK(prop[3] == Approx(0.01 / 1.01));
    // Large CFP differences do not overflow the softmax.
    const auto big = target_prior({400.0, 0.0}, TargetPrior::Softmax, 2.0, 0.01);
    CHECK(big[0] == Approx(1.0));
    CHECK(std::isfinite(big[1]));
}

TEST_CASE("fair_tat: end of epoch sets CFP, pi and eps_k = (0.5 + r_k)*eps from the epoch's counts", "[fair]") {
    FairTat m(options());
    const ClassStats s = hand_stats();
    end_epoch(m, 0, s);
    const std::vector<double> r{0.8, 0.6, 0.7, 0.9};   // correct·4/40 = (8, 6, 7, 9)/10
    for (int k = 0; k < 4; ++k) CHECK(m.class_eps()[k] == Approx((0.5 + r[k]) * kEps).epsilon(1e-6));
    const auto soft = target_prior({0.6, 0.3, 0.1, 0.0}, TargetPrior::Softmax, 2.0, 0.01);
    for (int k = 0; k < 4; ++k) CHECK(m.prior()[k] == Approx(soft[k]).epsilon(1e-6));
    REQUIRE(m.class_state_names() == std::vector<std::string>{"eps", "cfp", "target_prob"});
    const auto state = m.class_state();
    CHECK(state[1][0] == Approx(0.6));
    CHECK(state[1][3] == 0.0);
    CHECK(state[2][0] == Approx(soft[0]).epsilon(1e-6));

    // ε scaling off keeps ε_k = ε but still moves the prior (independent switches).
    MethodOptions o = options();
    o.cfa.tat_eps_scaling = false;
    FairTat plain(o);
    end_epoch(plain, 0, s);
    CHECK(plain.class_eps() == std::vector<float>(4, kEps));
    CHECK(plain.prior()[0] == Approx(soft[0]).epsilon(1e-6));

    // Save / load.
    std::map<std::string, Tensor> tensors;
    nn::Metadata meta;
    m.save_state(tensors, meta);
    FairTat back(options());
    back.load_state(tensors, meta);
    CHECK(back.class_eps() == m.class_eps());
    CHECK(back.prior() == m.prior());
    CHECK(back.class_state() == m.class_state());
}

TEST_CASE("fair_tat: targets never hit the true class and follow pi conditioned on t != y; epoch 0 is uniform",
          "[fair]") {
    FairTat m(options());
    end_epoch(m, 0, hand_stats());
    const auto pi = m.prior();
    Rng rng(123);
    constexpr int n = 20000;
    for (int32_t label = 0; label < 4; ++label) {
        INFO("label " << label);
        const auto f = frequencies(m, label, 1, n, rng);
        CHECK(f[static_cast<size_t>(label)] == 0.0);
        std::vector<double> expect = pi;
        expect[static_cast<size_t>(label)] = 0;
        const double rest = 1 - pi[static_cast<size_t>(label)];
        for (double& v : expect) v /= rest;
        check_binomial(f, expect, n);
    }
    // High-CFP classes are drawn more often: for class 3's samples, 0 (CFP 0.6) > 1 (0.3) > 2 (0.1).
    const auto f3 = frequencies(m, 3, 1, n, rng);
    CHECK(f3[0] > f3[1]);
    CHECK(f3[1] > f3[2]);

    // Epoch 0: uniform over the other classes, whatever π is.
    for (int32_t label = 0; label < 4; ++label) {
        std::vector<double> uniform(4, 1.0 / 3);
        uniform[static_cast<size_t>(label)] = 0;
        check_binomial(frequencies(m, label, 0, n, rng), uniform, n);
    }
    // Random-target ablation: uniform in later epochs too.
    MethodOptions o = options();
    o.cfa.tat_random_target = true;
    FairTat random(o);
    end_epoch(random, 0, hand_stats());
    check_binomial(frequencies(random, 0, 5, n, rng), {0.0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, n);
    CHECK(random.prior() == std::vector<double>(4, 0.25));
}

TEST_CASE("fair_tat: draw_target with zero weights elsewhere falls back to uniform, never the label", "[fair]") {
    Rng rng(5);
    for (int i = 0; i < 200; ++i) {
        CHECK(draw_target({1.0, 0.0, 0.0}, 0, rng) != 0);
        CHECK(draw_target({0.0, 0.0, 1.0}, 1, rng) == 2);
    }
}
