// The trained side of FRL §3's example: linear models trained with the engine land near the theorems (weight
// ratio η/γ natural, ≈ 0 adversarial; class-wise errors near the optimum's and never below it), and their
// per-sample records count the exact worst-case attack as AutoAttack does.
#include <catch2/catch.hpp>

#include <cmath>

#include "datasets/gaussian_mixture.h"
#include "datasets/gaussian_theory.h"
#include "train/gaussian_linear.h"

using namespace cw;
using namespace cw::fairness;

namespace {
GaussianTheoryParams g3() {
    const data::GaussianPreset g = data::gaussian_preset("G3");
    return {g.params, g.eps_train, g.eps_test};
}
}  // namespace

TEST_CASE("gaussian training: trained linear models land near Lemmas 1-2 and Theorems 1-2", "[gaussian]") {
    // G3 (m = 4, d = 40): small enough for a few seconds, errors of visible size.
    const GaussianTheoryParams p = g3();
    Rng rng(5);
    const data::GaussianSamples train = data::sample_gaussian_mixture(p.data, 20000, rng);
    train::LinearTrainOptions o;
    o.epochs = 10;
    o.lr = 0.05;
    o.seed = 1;
    const train::LinearTrainResult nat = train::train_linear(train, o);
    o.adversarial = true;
    o.eps = p.eps;
    const train::LinearTrainResult adv = train::train_linear(train, o);
    REQUIRE(nat.epoch_loss.size() == 10);
    CHECK(nat.epoch_loss.back() < nat.epoch_loss.front());

    // Weight ratio: η/γ = 0.1 for the natural model; the adversarial one drops the non-robust coordinates.
    const double ratio_nat = nonrobust_weight_ratio(nat.model, p.data.m);
    const double ratio_adv = nonrobust_weight_ratio(adv.model, p.data.m);
    INFO("weight ratios: natural " << ratio_nat << ", adversarial " << ratio_adv);
    CHECK(std::fabs(ratio_nat - 0.1) < 0.02);
    CHECK(ratio_adv < 0.02);

    // Class-wise errors, exact for the trained w and b: within 1.5 points of the optimum's (measured: 0.6 and 0.8
    // points for the natural model, at most 0.35 for the adversarial one; the rest is sampling noise in w and a
    // sigmoid loss that is only nearly the 0-1 error), and their sum never below the optimum's sum.
    const TheoremErrors nat_theory = theorem1(p), adv_theory = theorem2(p);
    const LinearSummary nat_f = summarise(nat.model, p.data), adv_f = summarise(adv.model, p.data);
    const ClassErrors nat_clean = classwise_errors(p.data, nat_f, 0);
    const ClassErrors adv_clean = classwise_errors(p.data, adv_f, 0), adv_rob = classwise_errors(p.data, adv_f, p.eps0);
    for (int k = 0; k < 2; ++k) {
        INFO("class " << k << ": natural clean " << nat_clean.error[k] << " vs " << nat_theory.clean.error[k]
                      << "; AT clean " << adv_clean.error[k] << " vs " << adv_theory.clean.error[k] << "; AT robust "
                      << adv_rob.error[k] << " vs " << adv_theory.robust.error[k]);
        CHECK(std::fabs(nat_clean.error[k] - nat_theory.clean.error[k]) < 0.015);
        CHECK(std::fabs(adv_clean.error[k] - adv_theory.clean.error[k]) < 0.015);
        CHECK(std::fabs(adv_rob.error[k] - adv_theory.robust.error[k]) < 0.015);
    }
    CHECK(nat_clean.error[0] + nat_clean.error[1] >= nat_theory.clean.error[0] + nat_theory.clean.error[1] - 1e-12);
    CHECK(adv_rob.error[0] + adv_rob.error[1] >= adv_theory.robust.error[0] + adv_theory.robust.error[1] - 1e-12);
    // The paper's point, on the trained models: the class gap widens under adversarial training.
    CHECK(omega(adv_clean, nat_clean) > 1);

    // The logistic loss finds the same directions (its bias is another matter, see train/gaussian_linear.h).
    o.loss = train::parse_linear_loss("logistic");
    CHECK(std::fabs(nonrobust_weight_ratio(train::train_linear(train, o).model, p.data.m)) < 0.02);
    o.adversarial = false;
    CHECK(std::fabs(nonrobust_weight_ratio(train::train_linear(train, o).model, p.data.m) - 0.1) < 0.02);
    CHECK_THROWS_WITH(train::parse_linear_loss("hinge"), Catch::Contains("expected sigmoid or logistic"));
}

TEST_CASE("gaussian training: records count the exact worst case as AutoAttack does", "[gaussian]") {
    // w = (1, 0), b = 0 on two hand-made points of m = 1, d = 1: x = (0.3, 5) of class +1 is clean-correct and
    // broken at ε₀ = 0.5 (score 0.3 - 0.5 < 0); x = (-2, 0) of class -1 is correct and robust.
    data::GaussianSamples s;
    s.n = 2;
    s.dim = 2;
    s.x = {0.3f, 5.f, -2.f, 0.f};
    s.labels = {1, 0};
    const eval::EvalRecords r = train::linear_records({{1.0, 0.0}, 0.0}, s, 0.5, "fgsm");
    CHECK(r.clean_pred == std::vector<int32_t>{1, 0});
    CHECK(r.adv_pred.at(0) == std::vector<int32_t>{0, 0});
}
