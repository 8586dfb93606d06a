// The evaluator's sanity checks (docs/protocols/attacks.md §8) given bad points and bad models: a point outside the ε-ball
// (L∞, L2, a per-sample ε of 0), outside [0, 1], a NaN, a model whose two forward passes differ — each must be
// caught, at unit level and through evaluate() with a deliberately broken attack.
#include <filesystem>
#include <limits>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "attacks/checks.h"
#include "attacks/ensemble.h"
#include "eval/evaluator.h"
#include "tests/test_evaluator_util.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw::eval;
using namespace cw_test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Two samples of 4 values: x and a copy to break.
Images two_samples() {
    Images x(2, {1, 2, 2});
    x.v = {0.2f, 0.5f, 0.9f, 1.0f, 0.0f, 0.3f, 0.6f, 0.7f};
    return x;
}

// Moves every value of sample 1 by `delta` (the L∞ distance is |delta|, the L2 distance 2|delta|).
Images shifted(const Images& x, float delta) {
    Images a = x;
    for (int64_t j = 0; j < a.dim(); ++j) a.row(1)[j] = std::min(std::max(a.row(1)[j] + delta, 0.f), 1.f);
    return a;
}

// Returns x + 2ε·(±1) pattern (inside the box, outside the ball): what a broken projection would give.
class LeavesTheBall : public Attack {
public:
    explicit LeavesTheBall(float eps) : Attack(Norm::Linf, eps, ModelMode::Eval) { set_log(nullptr); }
    std::string name() const override { return "leaves-ball"; }
    nlohmann::json config() const override { return base_config("leaves_ball"); }
protected:
    Perturbation perturb(AttackContext& ctx) override {
        Images a = ctx.host_x();
        for (size_t j = 0; j < a.v.size(); ++j) {
            const float step = 2.f * eps();
            a.v[j] = a.v[j] + step <= 1.f ? a.v[j] + step : a.v[j] - step;
        }
        return {to_tensor(a, ctx.device()), {}, {}};
    }
};

// Adds fresh noise to its input on every call, whatever its mode: a model that is not deterministic.
class Noisy : public nn::Module {
public:
    explicit Noisy(std::shared_ptr<nn::Module> inner) : Module("Noisy"), inner_(std::move(inner)) {
        register_module("inner", inner_);
    }
    Tensor forward(const Tensor& x) override {
        std::vector<float> noise(static_cast<size_t>(x.numel()));
        rng_.fill_normal(noise.data(), noise.size(), 0.f, 1e-3f);
        return inner_->forward(add(x, Tensor::from_vector(noise, x.shape())));
    }
private:
    std::shared_ptr<nn::Module> inner_;
    Rng rng_{11};
};

EvalOptions options(std::ostream* log, const std::string& out_dir = "") {
    EvalOptions o;
    o.out_dir = out_dir;
    o.log = log;
    o.info.dataset = "blobs";
    o.info.split = "test";
    o.info.seed = 1;
    for (int k = 0; k < kClasses; ++k) o.info.classes.push_back("c" + std::to_string(k));
    return o;
}

}  // namespace

TEST_CASE("check_adversarial accepts points inside the ball and the box", "[attacks]") {
    const Images x = two_samples();
    REQUIRE(check_adversarial(x, x, {0.f, 0.f}, Norm::Linf) == "");
    REQUIRE(check_adversarial(x, x, {0.f, 0.f}, Norm::L2) == "");
    REQUIRE(check_adversarial(x, shifted(x, 0.05f), {0.f, 0.05f}, Norm::Linf) == "");
    REQUIRE(check_adversarial(x, shifted(x, -0.05f), {0.f, 0.1f}, Norm::L2) == "");   // L2 distance sqrt(3)·0.05
}

TEST_CASE("check_adversarial catches a point outside the eps-ball (L-inf, L2, per-sample eps of 0)", "[attacks]") {
    const Images x = two_samples();
    // L∞: 1e-4 beyond ε (the slack is 1e-6)
    REQUIRE_THAT(check_adversarial(x, shifted(x, 0.0501f), {0.05f, 0.05f}, Norm::Linf),
                 Contains("sample 1") && Contains("linf distance") && Contains("exceeds eps"));
    // L2: each of 4 values moved by 0.05 is distance 0.1 (4 · 0.05² = 0.01), every value under ε = 0.09
    REQUIRE_THAT(check_adversarial(x, shifted(x, 0.05f), {0.09f, 0.09f}, Norm::L2),
                 Contains("sample 1") && Contains("l2 distance"));
    // per-sample ε: sample 1 may not move at all
    REQUIRE_THAT(check_adversarial(x, shifted(x, 1e-3f), {0.5f, 0.f}, Norm::Linf), Contains("sample 1"));
    // the per-sample radius is used, not the largest one
    Images one_value = x;
    one_value.row(0)[1] += 0.02f;
    REQUIRE_THAT(check_adversarial(x, one_value, {0.01f, 0.5f}, Norm::Linf), Contains("sample 0"));
    REQUIRE(check_adversarial(x, one_value, {0.03f, 0.f}, Norm::Linf) == "");
}

TEST_CASE("check_adversarial catches values outside [0, 1] and NaNs, even inside the ball", "[attacks]") {
    const Images x = two_samples();
    Images above = x;
    above.row(0)[3] = 1.0001f;   // x = 1.0: 1e-4 away, well inside ε = 0.1
    REQUIRE_THAT(check_adversarial(x, above, {0.1f, 0.1f}, Norm::Linf), Contains("sample 0") && Contains("outside [0, 1]"));
    Images below = x;
    below.row(1)[0] = -0.0001f;  // x = 0.0
    REQUIRE_THAT(check_adversarial(x, below, {0.1f, 0.1f}, Norm::L2), Contains("sample 1") && Contains("outside [0, 1]"));
    Images nan = x;
    nan.row(1)[2] = std::numeric_limits<float>::quiet_NaN();
    REQUIRE_THAT(check_adversarial(x, nan, {0.1f, 0.1f}, Norm::Linf), Contains("sample 1") && Contains("NaN"));
    REQUIRE_THAT(check_adversarial(x, Images(3, {1, 2, 2}), {0.1f, 0.1f}, Norm::Linf), Contains("different shape"));
}

TEST_CASE("model_is_deterministic catches dropout in train mode and a model that adds noise", "[attacks]") {
    const Blobs b = make_blobs(8, 77);
    auto mlp = make_mlp(3);
    mlp->eval();
    REQUIRE(model_is_deterministic(*mlp, b.x));

    Rng dropout_rng(5);
    nn::Sequential with_dropout{std::make_shared<nn::Flatten>(), std::make_shared<nn::Dropout>(0.5f, dropout_rng),
                                std::make_shared<nn::Linear>(192, kClasses, true, dropout_rng)};
    with_dropout.train();
    REQUIRE_FALSE(model_is_deterministic(with_dropout, b.x));
    with_dropout.eval();
    REQUIRE(model_is_deterministic(with_dropout, b.x));

    Noisy noisy(mlp);
    noisy.eval();
    REQUIRE_FALSE(model_is_deterministic(noisy, b.x));
}

TEST_CASE("evaluate counts an attack's points outside the ball as sanity violations", "[attacks]") {
    nn::Module& model = trained_mlp();
    LeavesTheBall broken(kBlobEps);
    std::vector<std::unique_ptr<Attack>> parts;
    parts.push_back(std::make_unique<LeavesTheBall>(kBlobEps));
    Ensemble ensemble("broken-ensemble", nlohmann::json::object(), std::move(parts));
    ensemble.set_log(nullptr);

    EvalTempDir tmp("cw_checks_test");
    std::ostringstream log;
    const EvalOutcome out = evaluate(model, blob_batches(2, 4040), {&broken, &ensemble}, options(&log, tmp.path.string()));
    INFO(log.str());
    // every batch of the plain attack, and every batch of the ensemble's one stage that had points to attack
    REQUIRE(out.attacks.at(0).sanity_violations == 2);
    REQUIRE(out.attacks.at(1).sanity_violations == 2);
    REQUIRE(log.str().find("warning: leaves-ball batch 1: sample 0: linf distance") != std::string::npos);
    const auto j = nlohmann::json::parse(util::read_file_text((tmp.path / "results.json").string()));
    REQUIRE(j["evaluations"][1]["name"] == "leaves-ball");
    REQUIRE(j["evaluations"][1]["sanity_violations"] == 2);
    REQUIRE(j["evaluations"][2]["sanity_violations"] == 2);
}

TEST_CASE("evaluate warns about a model whose forward passes differ", "[attacks]") {
    Noisy noisy(trained_mlp_ptr());
    std::ostringstream noisy_log, plain_log;
    evaluate(noisy, blob_batches(2, 4040), {}, options(&noisy_log));
    REQUIRE(noisy_log.str().find("two forward passes of the same batch differ") != std::string::npos);
    evaluate(trained_mlp(), blob_batches(2, 4040), {}, options(&plain_log));
    REQUIRE(plain_log.str().find("differ") == std::string::npos);
}
