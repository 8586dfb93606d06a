// CFA (docs/protocols/cfa.md): the class-wise calibrated ε_k (CCM) and β_k (CCR) from the previous epoch's t_k, the
// begin epoch, the switches, the per-base λ1, class state and its save/load, and the family's names and flags.
#include <catch2/catch.hpp>

#include "fairness/methods/cfa.h"
#include "nn/layers.h"
#include "jobs/registry.h"
#include "util/flags.h"

using namespace cw;
using namespace cw::train;

namespace {

constexpr float kEps = 8.f / 255;

// Unbalanced on purpose: the code form correct_k·C/N differs from recall correct_k/seen_k for class 0.
//   class 0: 6 seen, 3 correct, class 1: 4 seen, 2 correct, class 2: 2 seen, 0 correct; N = 12, C = 3
//   t = (3·3/12, 2·3/12, 0) = (0.75, 0.5, 0)   (recall would be 0.5, 0.5, 0)
ClassStats hand_stats() {
    ClassStats s(3);
    std::vector<int32_t> y, p;
    auto add = [&](int32_t label, int32_t pred, int n) {
        for (int i = 0; i < n; ++i) {
            y.push_back(label);
            p.push_back(pred);
        }
    };
    add(0, 0, 3), add(0, 1, 3), add(1, 1, 2), add(1, 2, 2), add(2, 0, 2);
    s.add(y, p, {});
    return s;
}
const std::vector<double> kT{0.75, 0.5, 0.0};

MethodOptions options(int begin) {
    MethodOptions o;
    o.eps = kEps;
    o.steps = 2;
    o.cfa.begin = begin;
    return o;
}

void end_epoch(Method& m, int64_t epoch, const ClassStats& s) {
    nn::Sequential dummy;
    m.end_epoch(EpochEnd{epoch, s, dummy});
}

}  // namespace

TEST_CASE("cfa: eps_k = (lambda1 + t_k)*eps and beta_k = (lambda2 + t_k)*beta from epoch begin on, eps/beta before",
          "[fair]") {
    Cfa cfa(CfaBase::Trades, options(2));
    REQUIRE(cfa.lambda_eps() == 0.3f);   // the paper's λ1 for TRADES
    const ClassStats s = hand_stats();
    // Epoch 0 ends: epoch 1 < begin = 2 keeps ε and β; t is recorded.
    end_epoch(cfa, 0, s);
    REQUIRE(cfa.class_eps() == std::vector<float>(3, kEps));
    REQUIRE(cfa.class_beta() == std::vector<float>(3, 6.f));
    REQUIRE(cfa.t() == kT);
    // Epoch 1 ends: epoch 2 uses the calibrated values.
    end_epoch(cfa, 1, s);
    for (int k = 0; k < 3; ++k) {
        INFO("class " << k);
        CHECK(cfa.class_eps()[k] == Approx((0.3 + kT[k]) * kEps).epsilon(1e-6));
        CHECK(cfa.class_beta()[k] == Approx((0.5 + kT[k]) * 6.0).epsilon(1e-6));
    }
    // ε_k exceeds ε when t_k > 1 − λ1 (class 0: 1.05·ε).
    CHECK(cfa.class_eps()[0] > kEps);

    // class_state: eps, beta, t.
    REQUIRE(cfa.class_state_names() == std::vector<std::string>{"eps", "beta", "t"});
    const auto state = cfa.class_state();
    REQUIRE(state.size() == 3);
    CHECK(state[0][2] == Approx(0.3 * kEps));
    CHECK(state[1][1] == Approx(6.0));
    CHECK(state[2] == kT);
}

TEST_CASE("cfa: per-base lambda1 (paper 0.5 AT / 0.7 FAT), --cfa-lambda overrides; CCM and CCR switch off", "[fair]") {
    const ClassStats s = hand_stats();
    Cfa at(CfaBase::At, options(0)), fat(CfaBase::Fat, options(0));
    end_epoch(at, 0, s);
    end_epoch(fat, 0, s);
    CHECK(at.class_eps()[1] == Approx(1.0 * kEps));
    CHECK(fat.class_eps()[1] == Approx(1.2 * kEps));
    REQUIRE(at.class_state_names() == std::vector<std::string>{"eps", "t"});

    MethodOptions o = options(0);
    o.cfa.lambda_eps = 0.1f;
    o.cfa.ccr = false;
    o.beta = 4;
    Cfa no_ccr(CfaBase::Trades, o);
    end_epoch(no_ccr, 0, s);
    CHECK(no_ccr.class_eps()[2] == Approx(0.1 * kEps));
    CHECK(no_ccr.class_beta() == std::vector<float>(3, 4.f));

    o.cfa.ccr = true;
    o.cfa.ccm = false;
    Cfa no_ccm(CfaBase::Trades, o);
    end_epoch(no_ccm, 0, s);
    CHECK(no_ccm.class_eps() == std::vector<float>(3, kEps));
    CHECK(no_ccm.class_beta()[0] == Approx(1.25 * 4.0));
}

TEST_CASE("cfa: class state survives save_state / load_state; a wrong-length tensor is a clear error", "[fair]") {
    Cfa a(CfaBase::Trades, options(0));
    end_epoch(a, 0, hand_stats());
    std::map<std::string, Tensor> tensors;
    nn::Metadata meta;
    a.save_state(tensors, meta);
    Cfa b(CfaBase::Trades, options(0));
    b.load_state(tensors, meta);
    CHECK(b.class_eps() == a.class_eps());
    CHECK(b.class_beta() == a.class_beta());
    CHECK(b.t() == a.t());
    tensors["beta"] = Tensor::from_vector({1.f, 2.f}, {2});
    REQUIRE_THROWS_WITH(b.load_state(tensors, meta),
                        Catch::Matchers::Contains("'beta' has 2 entries, expected one per class (3)"));
}

TEST_CASE("cfa and fair_tat: registry names, descriptions, flags and bad values", "[fair]") {
    for (const std::string n : {"cfa_at", "cfa_trades", "cfa_fat", "fair_tat", "fair_tat_trades", "fair_tat_fat"}) {
        const auto& names = method_names();
        REQUIRE(std::find(names.begin(), names.end(), n) != names.end());
        const MethodPtr m = make_method(n, options(10));
        INFO(m->describe());
        CHECK(m->name() == n);
        CHECK(m->describe().rfind(n + ":", 0) == 0);
    }
    CHECK(make_method("cfa_trades", options(10))->describe().find("CFA-normalised") != std::string::npos);
    CHECK(make_method("cfa_fat", options(10))->describe().find("CFA semantics") != std::string::npos);
    CHECK(make_method("cfa_at", options(10))->describe().find("attack in train mode") != std::string::npos);
    CHECK(make_method("fair_tat", options(10))->describe().find("softmax(2*CFP)") != std::string::npos);
    // CFA's train_epoch runs the clean train-mode forward after every step whatever the base (TRADES alone would
    // not, FAT neither).
    for (const char* n : {"cfa_at", "cfa_trades", "cfa_fat"}) {
        INFO(n);
        CHECK(make_method(n, options(10))->clean_forward_after_step() == CleanForward::Train);
        CHECK(make_method(n, options(10))->describe().find("clean forward after step: train") != std::string::npos);
    }
    CHECK(make_method("trades", options(10))->clean_forward_after_step() == CleanForward::Off);
    const std::string tt = make_method("fair_tat_trades", options(10))->describe();
    CHECK(tt.find("attack in eval mode") != std::string::npos);
    CHECK(tt.find("start x + 0.001*N(0,I)") != std::string::npos);
    CHECK(tt.find("reconstruction") != std::string::npos);
    CHECK(make_method("fair_tat", options(10))->describe().find("attack in train mode") != std::string::npos);
    const std::string tf = make_method("fair_tat_fat", options(10))->describe();
    CHECK(tf.find("early-stopped (tau 3, stops on argmax != y)") != std::string::npos);
    CHECK(tf.find("attack in train mode") != std::string::npos);
    CHECK(tf.find("reconstruction") != std::string::npos);

    cli::FlagSet app{"t"};
    MethodOptions f;
    add_method_flags(app, f);
    const char* argv[] = {"t", "--cfa-begin", "3", "--cfa-lambda", "0.4", "--cfa-lambda-beta", "0.6", "--no-cfa-ccm",
                          "--no-cfa-ccr", "--fair-tat-prior", "Proportional", "--fair-tat-floor", "0.05",
                          "--fair-tat-random-target", "--no-fair-tat-eps-scaling", "--fair-tat-begin", "2",
                          "--fair-tat-lambda", "0.2", "--fair-tat-softmax-scale", "3"};
    app.parse(static_cast<int>(sizeof argv / sizeof *argv), argv);
    CHECK(f.cfa.begin == 3);
    CHECK(f.cfa.lambda_eps == 0.4f);
    CHECK(f.cfa.lambda_beta == 0.6f);
    CHECK_FALSE(f.cfa.ccm);
    CHECK_FALSE(f.cfa.ccr);
    CHECK(f.cfa.tat_prior == TargetPrior::Proportional);
    CHECK(f.cfa.tat_floor == 0.05f);
    CHECK(f.cfa.tat_random_target);
    CHECK_FALSE(f.cfa.tat_eps_scaling);
    CHECK(f.cfa.tat_begin == 2);
    CHECK(f.cfa.tat_lambda == 0.2f);
    CHECK(f.cfa.tat_softmax_scale == 3.f);

    MethodOptions bad = options(10);
    bad.cfa.tat_floor = 0;
    REQUIRE_THROWS_WITH(make_method("fair_tat", bad), Catch::Matchers::Contains("--fair-tat-floor must be > 0"));
    bad = options(-1);
    REQUIRE_THROWS_WITH(make_method("cfa_at", bad), Catch::Matchers::Contains("--cfa-begin must be >= 0"));
}
