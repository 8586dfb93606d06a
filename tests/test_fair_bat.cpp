// BAT (docs/protocols/bat.md, our reconstruction): the per-class early-stop budget, the class-wise early-stopped PGD
// (equal budgets = attacks::EarlyStopPgd with CFA semantics; τ = 0 rows stay at the random start), the
// uniform-target regulariser on hand-made logits, the loss's per-sample terms, and state save/load.
#include <catch2/catch.hpp>

#include <cmath>

#include "attacks/early_stop_pgd.h"
#include "attacks/steps.h"
#include "engine/ops.h"
#include "fairness/methods/bat.h"
#include "fairness/methods/classwise_early_stop.h"
#include "fairness/methods/longtail_losses.h"
#include "tests/test_train_methods_util.h"
#include "jobs/registry.h"

using namespace cw;
using namespace cw::train;

namespace {
Tensor batch_images(int64_t n, Rng& rng) {
    std::vector<float> v;
    for (int64_t i = 0; i < n * 3 * 8 * 8; ++i) v.push_back(rng.uniform(0.2f, 0.8f));
    return Tensor::from_vector(v, {n, 3, 8, 8});
}
}  // namespace

TEST_CASE("bat: tau_k = round(tau_max * t_k)", "[fair]") {
    REQUIRE(bat_class_tau({0.0, 0.1, 0.2, 0.5, 0.9, 1.0}, 3) == std::vector<int>{0, 0, 1, 2, 3, 3});
    REQUIRE(bat_class_tau({0.3, 0.6}, 10) == std::vector<int>{3, 6});
}

TEST_CASE("bat: class-wise early-stopped PGD equals EarlyStopPgd (cfa) with equal budgets; tau 0 stays at the start",
          "[fair]") {
    cw_train_test::QuietAttacks quiet;
    Rng init(3), data(4);
    auto net = cw_train_test::tiny_net(init, 3);
    const Tensor x = batch_images(12, data);
    std::vector<int32_t> y;
    for (int i = 0; i < 12; ++i) y.push_back(i % 3);
    const Tensor labels = Tensor::from_labels(y);
    ClasswiseEarlyStopConfig c;
    c.eps = 0.1f;
    c.alpha = 0.03f;
    c.steps = 5;
    for (int tau : {0, 2, 5}) {
        attacks::EarlyStopPgdConfig ref = attacks::fat_cfa_config(0.1f);
        ref.alpha = 0.03f;
        ref.steps = 5;
        ref.tau = tau;
        Rng a(7), b(7);
        const Tensor want = attacks::EarlyStopPgd(ref).run(*net, x, labels, a).x_adv;
        const Tensor got = classwise_early_stop_pgd(*net, x, labels, y, {tau, tau, tau}, c, b);
        INFO("tau " << tau);
        REQUIRE(got.to_vector() == want.to_vector());
    }
    // class 0 has budget 0: its rows are the uniform start itself; class 2 moves
    Rng a(8), b(8);
    const Tensor start = attacks::uniform_linf_start(x, std::vector<float>(12, 0.1f), a);
    const std::vector<float> got = classwise_early_stop_pgd(*net, x, labels, y, {0, 5, 5}, c, b).to_vector();
    const std::vector<float> s = start.to_vector();
    const size_t per = 3 * 8 * 8;
    double moved2 = 0;
    for (size_t i = 0; i < 12; ++i)
        for (size_t p = 0; p < per; ++p) {
            if (y[i] == 0) REQUIRE(got[i * per + p] == s[i * per + p]);
            if (y[i] == 2) moved2 += std::abs(got[i * per + p] - s[i * per + p]);
        }
    REQUIRE(moved2 > 0);
    REQUIRE_THROWS_WITH(classwise_early_stop_pgd(*net, x, labels, y, {1, 1}, c, b), Catch::Matchers::Contains("label 2 has no tau"));
}

TEST_CASE("bat: uniform-target regulariser KL(u || q over classes != y) on hand-made logits", "[fair]") {
    // row 0, y = 0: q over {1, 2} = (3/4, 1/4) → 0.5·ln(0.5/0.75) + 0.5·ln(0.5/0.25) = 0.5·ln(4/3)
    // row 1, y = 1: z_0 = z_2, whatever z_1 → q uniform → 0
    // row 2, y = 2, C = 3: q over {0, 1} = softmax(2, 0)
    const Tensor z = Tensor::from_vector({0, std::log(3.f), 0, 1, 9, 1, 2, 0, -5}, {3, 3});
    const std::vector<float> r = uniform_target_kl(z, {0, 1, 2}).to_vector();
    REQUIRE(r[0] == Approx(0.5 * std::log(4.0 / 3)).epsilon(1e-5));
    REQUIRE(r[1] == Approx(0.0).margin(1e-6));
    const double q0 = std::exp(2.0) / (std::exp(2.0) + 1), q1 = 1 - q0;
    REQUIRE(r[2] == Approx(0.5 * std::log(0.5 / q0) + 0.5 * std::log(0.5 / q1)).epsilon(1e-5));
}

TEST_CASE("bat: per-sample terms are (CE + beta*KL + mu*R_u)/B; tau follows the previous epoch; blobs loss falls; "
          "save/load", "[fair]") {
    cw_train_test::QuietAttacks quiet;
    MethodOptions o;
    o.eps = 8.f / 255;
    o.steps = 3;
    o.beta = 2;
    o.longtail.bat_mu = 0.5f;
    MethodPtr method = make_method("bat", o);
    auto& bat = dynamic_cast<Bat&>(*method);
    REQUIRE(method->describe().find("RECONSTRUCTION") != std::string::npos);
    Rng init(10), data(9);
    auto net = cw_train_test::tiny_net(init);
    // blobs: channel k brighter for class k
    std::vector<float> xv;
    std::vector<int32_t> yv;
    for (int64_t i = 0; i < 48; ++i) {
        const int k = static_cast<int>(i % 3);
        yv.push_back(k);
        for (int c = 0; c < 3; ++c)
            for (int p = 0; p < 64; ++p) xv.push_back(0.3f + (c == k ? 0.4f : 0.f) + data.uniform(-0.1f, 0.1f));
    }
    nn::SgdOptions so;
    so.lr = 0.05f;
    nn::SGD opt(net->parameters(), so);
    Rng rng(11);
    std::vector<double> epoch_loss;
    for (int64_t e = 0; e < 6; ++e) {
        method->start_epoch({e, *net});
        ClassStats stats(3);
        double total = 0;
        for (int64_t b = 0; b < 3; ++b) {
            const std::vector<float> bx(xv.begin() + b * 16 * 192, xv.begin() + (b + 1) * 16 * 192);
            const std::vector<int32_t> by(yv.begin() + b * 16, yv.begin() + (b + 1) * 16);
            const Tensor x = Tensor::from_vector(bx, {16, 3, 8, 8}), y = Tensor::from_labels(by);
            const BatchLoss out = cw_train_test::sgd_step(*method, *net, opt, x, y, by, e, b, 3, rng);
            total += sum(out.per_sample).item();
            stats.add(by, argmax(out.logits, 1).to_int_vector(), out.per_sample.to_vector());
        }
        method->end_epoch({e, stats, *net});
        epoch_loss.push_back(total / 3);
    }
    INFO("bat: mean loss per epoch " << epoch_loss.front() << " ... " << epoch_loss.back());
    REQUIRE(epoch_loss.back() < 0.7 * epoch_loss.front());

    // the loss of one batch rebuilt by hand from the same x' (eval of the terms at fixed weights)
    {
        const std::vector<float> bx(xv.begin(), xv.begin() + 16 * 192);
        const std::vector<int32_t> by(yv.begin(), yv.begin() + 16);
        const Tensor x = Tensor::from_vector(bx, {16, 3, 8, 8}), y = Tensor::from_labels(by);
        Rng r1(5), r2(5);
        net->train();
        BatchInput in{*net, x, y, by, 6, 0, 3, r1};
        const double loss = sum(method->batch_loss(in).per_sample).item();
        ClasswiseEarlyStopConfig c;
        c.eps = o.eps;
        c.alpha = o.resolved_alpha();
        c.steps = 3;
        const Tensor x_adv = classwise_early_stop_pgd(*net, x, y, by, bat.tau(), c, r2);
        net->train();
        const Tensor nat = (*net)(x), adv = (*net)(x_adv);
        const double want = cross_entropy(nat, y).item() + 2 * kl_div(nat, adv).item() +
                            0.5 * mean(uniform_target_kl(adv, by)).item();
        REQUIRE(loss == Approx(want).epsilon(1e-5));
    }

    // tau from the last epoch's robust accuracy
    method->start_epoch({6, *net});
    REQUIRE(bat.class_state_names() == std::vector<std::string>{"tau", "robust_acc"});
    const auto state = bat.class_state();
    for (size_t k = 0; k < 3; ++k) REQUIRE(state[0][k] == std::lround(3 * state[1][k]));
    std::map<std::string, Tensor> tensors;
    nn::Metadata meta;
    method->save_state(tensors, meta);
    Bat back(o);
    back.load_state(tensors, meta);
    REQUIRE(back.class_state() == bat.class_state());
}
