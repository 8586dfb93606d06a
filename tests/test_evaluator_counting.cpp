// How the evaluator counts: AutoAttack's rule (robust = clean-correct and not broken) in the records, results.json
// and the table, for plain attacks as for the ensemble; and its refusal of attacks set to run in train mode.
#include <nlohmann/json.hpp>
#include <sstream>

#include "eval/evaluator.h"
#include "attacks/ensemble.h"
#include "attacks/pgd.h"
#include "tests/test_attacks_fixture.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw::eval;
using namespace cw_test;

namespace {

// Reads the class off the first pixel: logits_c = −(10·x − c)², so the image whose first pixel is 0.3 is a "3".
class PixelClassifier : public nn::Module {
public:
    PixelClassifier() : Module("PixelClassifier") {}
    Tensor forward(const Tensor& x) override {
        const std::vector<float> v = x.to_vector();
        const int64_t n = x.size(0), per = x.numel() / n;
        std::vector<float> z(static_cast<size_t>(n * 10));
        for (int64_t i = 0; i < n; ++i)
            for (int c = 0; c < 10; ++c) z[i * 10 + c] = -(10 * v[i * per] - c) * (10 * v[i * per] - c);
        return Tensor::from_vector(z, {n, 10}, x.device());
    }
};

// Moves every sample's pixel down by 0.1 (within its ε = 0.1 ball): a "4" becomes a "3", a "3" a "2".
class ShiftDown : public Attack {
public:
    explicit ShiftDown(ModelMode mode = ModelMode::Eval) : Attack(Norm::Linf, 0.1f, mode) { set_log(nullptr); }
    std::string name() const override { return "shift"; }
    nlohmann::json config() const override { return base_config("shift"); }
protected:
    Perturbation perturb(AttackContext& ctx) override {
        return {clamp(add(ctx.x, -0.1f), 0.f, 1.f), {}, {}};
    }
};

// Leaves every sample where it is.
class StayPut : public Attack {
public:
    StayPut() : Attack(Norm::Linf, 0.1f, ModelMode::Eval) { set_log(nullptr); }
    std::string name() const override { return "stay"; }
    nlohmann::json config() const override { return base_config("stay"); }
protected:
    Perturbation perturb(AttackContext& ctx) override { return {ctx.x.clone(), {}, {}}; }
};

}  // namespace

TEST_CASE("evaluator: an ensemble's accuracy after each stage counts clean-correct samples only (AutoAttack's rule)",
          "[attacks]") {
    PixelClassifier model;
    // s0: a "4" labelled 4, broken by stage 1 (→ 3); s1: a "4" labelled 3, clean-wrong, never attacked; s2: a "0"
    // labelled 0, robust (clipped at the box); s3: a "2" labelled 2, broken by stage 1 (→ 1). Stage 0 breaks none.
    EvalBatch b;
    b.images = Tensor::from_vector({0.4f, 0.4f, 0.f, 0.2f}, {4, 1, 1, 1});
    b.labels = Tensor::from_labels({4, 3, 0, 2});
    b.indices = {0, 1, 2, 3};
    std::vector<std::unique_ptr<Attack>> parts;
    parts.push_back(std::make_unique<StayPut>());
    parts.push_back(std::make_unique<ShiftDown>());
    Ensemble aa("aa", nlohmann::json::object(), std::move(parts));
    aa.set_log(nullptr);
    EvalOptions opt;
    opt.info.classes = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    const EvalOutcome out = evaluate(model, batches_from({b}), {&aa}, opt);
    REQUIRE(out.attacks.size() == 1);
    const auto& stages = out.attacks[0].stages;
    REQUIRE(stages.size() == 2);
    // after "stay": s0, s2, s3 (clean-correct, unbroken) = 3/4; without the clean check s1 would count too (4/4)
    CHECK(stages[0].first == "stay");
    CHECK(stages[0].second == Approx(0.75));
    // after "shift": s2 alone = 1/4 (not 2/4), the ensemble's own accuracy
    CHECK(stages[1].second == Approx(0.25));
    CHECK(out.results["evaluations"][1]["accuracy"].get<double>() == Approx(0.25));
    CHECK(out.results["evaluations"][1]["stages"][1]["accuracy"].get<double>() == Approx(0.25));
}

TEST_CASE("evaluator: a clean-wrong sample the attack flips to its label is not robust (AutoAttack's rule)",
          "[attacks]") {
    PixelClassifier model;
    // sample 0: a "4" labelled 4 -> broken (pred 3); sample 1: a "4" labelled 3 (clean-wrong) -> the attack flips
    // it to 3, its label: not robust; sample 2: a "0" labelled 0 -> stays 0 (clipped at the box): robust.
    EvalBatch b;
    b.images = Tensor::from_vector({0.4f, 0.4f, 0.f}, {3, 1, 1, 1});
    b.labels = Tensor::from_labels({4, 3, 0});
    b.indices = {0, 1, 2};
    ShiftDown attack;
    EvalOptions opt;
    opt.info.classes = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    std::ostringstream log;
    opt.log = &log;
    const EvalOutcome out = evaluate(model, batches_from({b}), {&attack}, opt);

    REQUIRE(out.records.clean_pred == std::vector<int32_t>{4, 4, 0});
    // the prediction counted under the attack: the clean-wrong sample keeps its clean prediction
    REQUIRE(out.records.adv_pred[0] == std::vector<int32_t>{3, 4, 0});
    const nlohmann::json& shift = out.results["evaluations"][1];
    REQUIRE(shift["name"] == "shift");
    REQUIRE(shift["accuracy"].get<double>() == Approx(1.0 / 3));   // the old rule gave 2/3
    REQUIRE(shift["per_class_accuracy"][3].get<double>() == 0.0);
    REQUIRE(shift["per_class_accuracy"][4].get<double>() == 0.0);
    REQUIRE(shift["per_class_accuracy"][0].get<double>() == 1.0);
    REQUIRE(shift["confusion"][3][4] == 1);   // counted where AutoAttack leaves it: at its clean prediction
    REQUIRE(log.str().find("1 clean-wrong flipped to the label, not counted as robust") != std::string::npos);
    // the table: overall 66.7 clean, 33.3 under the attack
    INFO(log.str());
    REQUIRE(log.str().find("overall    66.7    33.3") != std::string::npos);
}

TEST_CASE("evaluator: an attack configured for train mode is refused with a clear error", "[attacks]") {
    PixelClassifier model;
    EvalBatch b;
    b.images = Tensor::from_vector({0.4f}, {1, 1, 1, 1});
    b.labels = Tensor::from_labels({4});
    b.indices = {0};
    ShiftDown train_mode(ModelMode::Train);
    EvalOptions opt;
    opt.info.classes = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    REQUIRE_THROWS_WITH(evaluate(model, batches_from({b}), {&train_mode}, opt),
                        Catch::Contains("attack 'shift' is configured to run in train mode"));
}
