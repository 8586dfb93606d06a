// FRL's multiplier ascent and WAT's Hedge weights on hand-worked numbers (docs/protocols/frl.md §2, docs/protocols/wat.md), and the
// per-sample coefficients of their cost-sensitive TRADES losses.
#include <catch2/catch.hpp>

#include <cmath>

#include "fairness/methods/frl.h"
#include "fairness/methods/frl_baseline_rw.h"
#include "fairness/methods/frl_update.h"
#include "fairness/methods/validation_pass.h"
#include "fairness/methods/wat.h"
#include "nn/layers.h"
#include "jobs/registry.h"

using namespace cw;
using namespace cw::train;

namespace {
void check_vec(const std::vector<double>& got, const std::vector<double>& want, double margin = 1e-12) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("entry " << i << ": got " << got[i] << ", want " << want[i]);
        CHECK(got[i] == Approx(want[i]).epsilon(1e-12).margin(margin));
    }
}
// Sends every image to a fixed point: the "attack" of a hand-worked validation pass.
class SendTo : public attacks::Attack {
public:
    explicit SendTo(std::vector<float> points) : Attack(attacks::Norm::Linf, 1.f, attacks::ModelMode::Eval), p_(std::move(points)) {
        set_log(nullptr);
    }
    std::string name() const override { return "send"; }
    nlohmann::json config() const override { return base_config("send"); }
protected:
    attacks::Perturbation perturb(attacks::AttackContext& ctx) override {
        return {Tensor::from_vector(p_, ctx.x.shape(), ctx.device()), {}, {}};
    }
private:
    std::vector<float> p_;
};
}  // namespace

TEST_CASE("frl: validation errors count a sample correct under the attack as robust, whatever its clean prediction "
          "(FRL's code)",
          "[fair]") {
    // Logits are the images [4, 2, 1, 1]. Labels 0, 0, 0, 1:
    //   s0 clean right, attacked right; s1 clean right, attacked wrong; s2 clean WRONG, attacked right; s3 clean
    //   wrong, attacked right.
    auto model = std::make_shared<nn::Lambda>([](const Tensor& x) { return reshape(x, {x.size(0), x.size(1)}); });
    const Tensor clean = Tensor::from_vector({0.9f, 0.1f, 0.9f, 0.1f, 0.1f, 0.9f, 0.9f, 0.1f}, {4, 2, 1, 1});
    SendTo attack({0.9f, 0.1f, 0.1f, 0.9f, 0.9f, 0.1f, 0.1f, 0.9f});
    EvalSplit split{"val", eval::batches_from({{clean, Tensor::from_labels({0, 0, 0, 1}), {0, 1, 2, 3}}})};
    const SplitScores s = any_correct_scores(*model, split, attack, 2, 1);
    check_vec(s.clean.per_class_accuracy, {2.0 / 3, 0.0});
    // The code: class 0 robust 2/3 (s0, s2), class 1 1/1 (s3); the evaluator's AutoAttack rule gives 1/3 and 0.
    check_vec(s.robust.per_class_accuracy, {2.0 / 3, 1.0});
    CHECK(s.robust.accuracy == Approx(0.75));
    // So the boundary error of class 0 is 0, of class 1 is −1 (clean 0, robust 1) — what FRL's code feeds its update.
    const FrlValidationErrors e = frl_errors(s.clean.per_class_accuracy, s.robust.per_class_accuracy, s.clean.accuracy,
                                             s.robust.accuracy);
    check_vec(e.bdy, {0.0, -1.0});
}

TEST_CASE("frl: Norm clamps at 0 then rescales onto sum <= lim", "[fair]") {
    check_vec(frl_norm({0.4, -0.2, 0.3}, 0.5), {0.4 * 0.5 / 0.7, 0.0, 0.3 * 0.5 / 0.7});   // clamp first: Σ = 0.7
    check_vec(frl_norm({0.1, 0.2, -1.0}, 0.5), {0.1, 0.2, 0.0});                             // Σ 0.3 ≤ lim: no scaling
    check_vec(frl_norm({0.5, 0.5}, 0.5), {0.25, 0.25});
}

TEST_CASE("frl: r1 halves at every multiple of 40 of the 1-based epoch, before that epoch's update", "[fair]") {
    CHECK(frl_r1_at(0.05, 0, 40) == 0.05);
    CHECK(frl_r1_at(0.05, 38, 40) == 0.05);     // t = 39
    CHECK(frl_r1_at(0.05, 39, 40) == 0.025);    // t = 40
    CHECK(frl_r1_at(0.05, 78, 40) == 0.025);
    CHECK(frl_r1_at(0.05, 79, 40) == 0.0125);   // t = 80
    CHECK(frl_r1_at(0.05, 79, 0) == 0.05);      // never
}

// Class 2 violates: clean 0.6 (overall 0.8) and boundary 0.4 (overall 0.3).
//   γ_nat = e_nat − E_nat − τ1 = {0.1, 0.1, 0.4} − 0.2 − 0.05 = {−0.15, −0.15, 0.15}
//   γ_bdy = e_bdy − E_bdy − τ2 = {0.3, 0.3, 0.4} − 0.3 − 0.07 = {−0.07, −0.07, 0.03}
const std::vector<double> kNat = {0.9, 0.9, 0.6}, kRob = {0.6, 0.6, 0.2};
constexpr double kOverallNat = 0.8, kOverallRob = 0.5;

TEST_CASE("frl: violations are measured against the overall errors and tau1 / tau2", "[fair]") {
    const FrlViolations g = frl_violations(frl_errors(kNat, kRob, kOverallNat, kOverallRob), 0.05, 0.07);
    check_vec(g.nat, {-0.15, -0.15, 0.15});
    check_vec(g.bdy, {-0.07, -0.07, 0.03});
    // A class absent from the split (NaN accuracy) neither violates nor relaxes beyond the tolerances.
    const FrlViolations absent = frl_violations(frl_errors({0.9, NAN}, {0.6, NAN}, 0.8, 0.5), 0.05, 0.07);
    check_vec(absent.nat, {0.1 - 0.2 - 0.05, -0.05});
}

// The paper's tolerances (flags; the scripts' are the defaults), which the hand numbers above use.
MethodOptions paper_tolerances() {
    MethodOptions o;
    o.frl.tau1 = 0.05;
    o.frl.tau2 = 0.07;
    return o;
}

TEST_CASE("frl_rwrm: the multipliers of a violating class rise, then fall back to 0 when it stops violating", "[fair]") {
    MethodOptions o = paper_tolerances();
    o.eps = 8.f / 255;
    Frl frl(FrlVariant::ReweightRemargin, o);   // τ1 0.05, τ2 0.07, r1 0.05, r2 0.2, lim 0.5, m ∈ [0.98, 3]
    frl.update(0, kNat, kRob, kOverallNat, kOverallRob);
    // λ_nat = Norm(0.05·γ_nat) = {0, 0, 0.0075}; λ_bdy = Norm(0.1·γ_bdy) = {0, 0, 0.003}; λ_m = 0.2·γ_bdy.
    check_vec(frl.multipliers().nat, {0, 0, 0.0075});
    check_vec(frl.multipliers().bdy, {0, 0, 0.003});
    check_vec(frl.multipliers().m, {-0.014, -0.014, 0.006});
    check_vec(frl.w_nat(), {1.0 / 3 - 0.0025, 1.0 / 3 - 0.0025, 1.0 / 3 + 0.005});
    check_vec(frl.w_bdy(), {1.0 / 3 - 0.001, 1.0 / 3 - 0.001, 1.0 / 3 + 0.002});
    check_vec(frl.eps_mult(), {0.98, 0.98, std::exp(0.012)});   // exp(−0.028) = 0.9724 is clipped to 0.98
    const auto state = frl.class_state();
    REQUIRE(frl.class_state_names()[6] == "violation_nat");
    check_vec(state[6], {-0.15, -0.15, 0.15});

    // Class 2 is now the best: clean error 0 (γ_nat = −0.25), boundary error 0.1 (γ_bdy = −0.27); the others sit
    // exactly at their tolerances (γ = 0 and −0.07).
    frl.update(1, {0.75, 0.75, 1.0}, {0.45, 0.45, 0.9}, 0.8, 0.5);
    check_vec(frl.multipliers().nat, {0, 0, 0});   // max(0.0075 − 0.0125, 0)
    check_vec(frl.multipliers().bdy, {0, 0, 0});   // max(0.003 − 0.027, 0)
    check_vec(frl.multipliers().m, {-0.028, -0.028, 0.006 - 0.054});   // λ_m is never projected
    check_vec(frl.w_nat(), {1.0 / 3, 1.0 / 3, 1.0 / 3});
    check_vec(frl.eps_mult(), {0.98, 0.98, 0.98});
}

TEST_CASE("frl: the variants run their own lines of the update; r1 is halved at epoch 40", "[fair]") {
    const MethodOptions o = paper_tolerances();
    Frl rw(FrlVariant::Reweight, o), rm(FrlVariant::Remargin, o);
    rw.update(0, kNat, kRob, kOverallNat, kOverallRob);
    rm.update(0, kNat, kRob, kOverallNat, kOverallRob);
    check_vec(rw.eps_mult(), {1, 1, 1});                     // reweight: m ≡ 1, λ_m untouched
    check_vec(rw.multipliers().m, {0, 0, 0});
    check_vec(rm.multipliers().bdy, {0, 0, 0});              // remargin: w_bdy = 1/C
    check_vec(rm.w_bdy(), {1.0 / 3, 1.0 / 3, 1.0 / 3});
    check_vec(rm.multipliers().m, {-0.007, -0.007, 0.003});  // r2 = 0.1 for remargin
    check_vec(rm.eps_mult(), {std::exp(-0.014), std::exp(-0.014), std::exp(0.006)});   // 0.986: above m_lo

    Frl late(FrlVariant::Reweight, o);
    late.update(39, kNat, kRob, kOverallNat, kOverallRob);   // t = 40: r1 = 0.025
    CHECK(late.r1_used() == 0.025);
    check_vec(late.multipliers().nat, {0, 0, 0.025 * 0.15});
    check_vec(late.multipliers().bdy, {0, 0, 0.05 * 0.03});
}

TEST_CASE("frl: the projection caps the multipliers at lim after many violating epochs", "[fair]") {
    FrlMultipliers l{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    FrlUpdateRule rule;
    const FrlViolations g{{-0.15, 0.25, 0.15}, {0, 0, 0}};
    for (int e = 0; e < 200; ++e) l = frl_update(l, g, rule);
    // Rates 0.0125 and 0.0075 per epoch: the sum reaches 0.5 and the projection keeps rescaling onto Σ = 0.5.
    CHECK(l.nat[0] == 0);
    CHECK(l.nat[1] + l.nat[2] == Approx(0.5).margin(1e-12));
    CHECK(l.nat[1] > l.nat[2]);
    check_vec(frl_costs(l.nat), {1.0 / 3 - 0.5 / 3, 1.0 / 3 + l.nat[1] - 0.5 / 3, 1.0 / 3 + l.nat[2] - 0.5 / 3});
}

TEST_CASE("frl: per-sample coefficients are w(y_i) / sum_b w(y_b), beta on the KL side", "[fair]") {
    const MethodOptions o = paper_tolerances();
    Frl frl(FrlVariant::ReweightRemargin, o);
    frl.update(0, kNat, kRob, kOverallNat, kOverallRob);
    const std::vector<int32_t> labels = {0, 2, 2};
    const TradesCoefficients c = frl.loss_coefficients(labels);
    const double wn0 = 1.0 / 3 - 0.0025, wn2 = 1.0 / 3 + 0.005, wb0 = 1.0 / 3 - 0.001, wb2 = 1.0 / 3 + 0.002;
    const double sn = wn0 + 2 * wn2, sb = wb0 + 2 * wb2;   // Σ_b w(y_b), not B and not Σ_k w_k
    check_vec({c.ce[0], c.ce[1], c.ce[2]}, {wn0 / sn, wn2 / sn, wn2 / sn}, 1e-7);
    check_vec({c.kl[0], c.kl[1], c.kl[2]}, {1.5 * wb0 / sb, 1.5 * wb2 / sb, 1.5 * wb2 / sb}, 1e-7);
}

TEST_CASE("frl: each variant's defaults are its script's (frlrw.py, frlrm.py, frlrmrw.py); flags override", "[fair]") {
    struct Want {
        FrlVariant v;
        double tau1, tau2, beta, lim, r2, m_hi;
    };
    for (const Want& w : {Want{FrlVariant::Reweight, 0.10, 0.10, 1.5, 0.5, 0.2, 3.0},
                          Want{FrlVariant::Remargin, 0.10, 0.10, 1.0, 0.3, 0.1, 2.5},
                          Want{FrlVariant::ReweightRemargin, 0.07, 0.07, 1.5, 0.5, 0.2, 3.0}}) {
        const FrlOptions f = Frl(w.v, MethodOptions{}).settings();
        INFO("variant " << static_cast<int>(w.v));
        CHECK(f.tau1 == w.tau1);
        CHECK(f.tau2 == w.tau2);
        CHECK(f.beta == w.beta);
        CHECK(f.lim == w.lim);
        CHECK(f.r2 == w.r2);
        CHECK(f.m_hi == w.m_hi);
    }
    const FrlOptions paper = Frl(FrlVariant::Remargin, paper_tolerances()).settings();
    CHECK(paper.tau1 == 0.05);
    CHECK(paper.tau2 == 0.07);
    // The defaults reach the update: remargin's γ_nat(2) = 0.4 − 0.2 − 0.10 = 0.10 (not 0.15 at the paper's τ1).
    Frl rm(FrlVariant::Remargin, MethodOptions{});
    rm.update(0, kNat, kRob, kOverallNat, kOverallRob);
    check_vec(rm.multipliers().nat, {0, 0, 0.05 * 0.10});
    // λ_m = r2·γ_bdy = 0.1·({0.3, 0.3, 0.4} − 0.3 − 0.10)
    check_vec(rm.multipliers().m, {-0.01, -0.01, 0.0});
}

TEST_CASE("frl_rm: one normaliser, sum(w_nat*CE + beta*w_bdy*KL) / sum(w_nat + w_bdy) (frlrm.py)", "[fair]") {
    const MethodOptions o = paper_tolerances();
    Frl frl(FrlVariant::Remargin, o);   // β 1.0
    frl.update(0, kNat, kRob, kOverallNat, kOverallRob);
    // λ_nat = {0, 0, 0.0075} as for rwrm: w_nat = {1/3 − 0.0025, 1/3 − 0.0025, 1/3 + 0.005}; w_bdy = 1/3 each.
    const std::vector<int32_t> labels = {0, 2, 2};
    const TradesCoefficients c = frl.loss_coefficients(labels);
    const double wn0 = 1.0 / 3 - 0.0025, wn2 = 1.0 / 3 + 0.005, wb = 1.0 / 3;
    const double s = wn0 + 2 * wn2 + 3 * wb;   // Σ_b (w_nat(y_b) + w_bdy(y_b)) = 1.0075 + 1
    check_vec({c.ce[0], c.ce[1], c.ce[2]}, {wn0 / s, wn2 / s, wn2 / s}, 1e-7);
    check_vec({c.kl[0], c.kl[1], c.kl[2]}, {wb / s, wb / s, wb / s}, 1e-7);
    MethodOptions b = o;
    b.frl.beta = 2;
    Frl doubled(FrlVariant::Remargin, b);
    doubled.update(0, kNat, kRob, kOverallNat, kOverallRob);
    CHECK(doubled.loss_coefficients(labels).kl[1] == Approx(2 * wb / s).epsilon(1e-6));
}

TEST_CASE("frl: the TRADES attack uses eps*m(y) per sample; RWRM's step is max_b(eps_b)/4 of the batch", "[fair]") {
    MethodOptions o;
    o.eps = 0.1f;
    Frl rwrm(FrlVariant::ReweightRemargin, o), rw(FrlVariant::Reweight, o);
    rwrm.update(0, kNat, kRob, kOverallNat, kOverallRob);   // m = {0.98, 0.98, exp(0.012)}
    rw.update(0, kNat, kRob, kOverallNat, kOverallRob);
    const auto a = rwrm.attack_settings({0, 1});
    CHECK(a.eps_per_class[0] == Approx(0.098).epsilon(1e-6));
    CHECK(a.eps_per_class[2] == Approx(0.1 * std::exp(0.012)).epsilon(1e-6));
    CHECK(a.step == Approx(0.098 / 4).epsilon(1e-6));                            // class 2 not in the batch
    CHECK(rwrm.attack_settings({0, 2, 1}).step == Approx(0.1 * std::exp(0.012) / 4).epsilon(1e-6));
    CHECK(rw.attack_settings({0, 2}).step == Approx(0.025).epsilon(1e-6));          // ε/4 (2/255 at 8/255)
    CHECK(rw.attack_settings({0, 2}).eps_per_class[2] == Approx(0.1).epsilon(1e-6));   // m ≡ 1
    o.frl.attack_step = 0.01;
    Frl fixed(FrlVariant::ReweightRemargin, o);
    fixed.update(0, kNat, kRob, kOverallNat, kOverallRob);
    CHECK(fixed.attack_settings({2}).step == Approx(0.01).epsilon(1e-6));
}

TEST_CASE("frl_baseline_rw: robust-error violations drive one multiplier vector", "[fair]") {
    MethodOptions o;
    FrlBaselineReweight b(o);
    // γ_rob = e_rob − E_rob − 0.05 = {0.4, 0.4, 0.8} − 0.5 − 0.05 = {−0.15, −0.15, 0.25}
    b.update(0, kRob, kOverallRob);
    check_vec(b.class_state()[0], {0, 0, 0.0125});
    check_vec(b.weight(), {1.0 / 3 - 0.0125 / 3, 1.0 / 3 - 0.0125 / 3, 1.0 / 3 + 0.0125 * 2 / 3});
}

TEST_CASE("wat: Hedge weights after two epochs of costs, C * softmax(eta * cumulative cost)", "[fair]") {
    MethodOptions o;
    Wat wat(o);
    // C = 2: class costs and the overall mean (the average expert) per epoch.
    wat.update({1.0, 3.0}, 2.0);   // cumulative {1, 3, 2}
    check_vec(wat.weights(), {0.601219210711, 0.734330802222, 0.664449987067}, 1e-11);
    wat.update({2.0, 0.5}, 1.25);   // cumulative {3, 3.5, 3.25}
    check_vec(wat.weights(), {0.650071169471, 0.683401031053, 0.666527799476}, 1e-11);
    check_vec(wat.class_state()[1], {3.0, 3.5});
    check_vec(wat.class_state()[3], {3.25, 3.25});
    // per_sample_i = (w_{y_i} + w_C)/B · (CE_i + β·KL_i)
    const TradesCoefficients c = wat.loss_coefficients({0, 1, 1});
    const double w0 = 0.650071169471, w1 = 0.683401031053, wc = 0.666527799476;
    check_vec({c.ce[0], c.ce[1]}, {(w0 + wc) / 3, (w1 + wc) / 3}, 1e-7);
    check_vec({c.kl[0], c.kl[2]}, {6 * (w0 + wc) / 3, 6 * (w1 + wc) / 3}, 1e-6);
}

TEST_CASE("frl / wat: registry names, saved state round trip, bad options", "[fair]") {
    for (const char* n : {"frl_rw", "frl_rm", "frl_rwrm", "frl_baseline_rw", "wat"})
        CHECK(make_method(n, {})->name() == n);
    MethodOptions o;
    Frl a(FrlVariant::ReweightRemargin, o), b(FrlVariant::ReweightRemargin, o);
    a.update(0, kNat, kRob, kOverallNat, kOverallRob);
    a.update(1, {0.8, 0.9, 0.7}, {0.5, 0.6, 0.3}, 0.8, 0.5);
    std::map<std::string, Tensor> tensors;
    nn::Metadata meta;
    a.save_state(tensors, meta);
    b.load_state(tensors, meta);
    CHECK(b.class_state() == a.class_state());   // exact: the doubles are saved with 17 digits

    Wat wa(o), wb(o);
    wa.update({1.0, 3.0}, 2.0);
    nn::Metadata wm;
    wa.save_state(tensors, wm);
    wb.load_state(tensors, wm);
    CHECK(wb.weights() == wa.weights());
    CHECK_THROWS_WITH(wb.load_state(tensors, meta), Catch::Contains("wat_classes"));

    MethodOptions bad;
    bad.frl.lim = 0;
    CHECK_THROWS_WITH(make_method("frl_rw", bad), Catch::Contains("--frl-lim"));
}
