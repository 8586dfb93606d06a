// Per-class mean logits, cross-class cosine similarity and superclass confusion in results.json: hand-computed on a
// linear model with known weights, checked against an independent forward at an attack's x_adv, unchanged by an
// interruption and resume, absent (not wrong) after resuming an older state file.
#include <cmath>
#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "attacks/autoattack.h"
#include "attacks/fgsm.h"
#include "attacks/pgd.h"
#include "datasets/dataset.h"
#include "datasets/error.h"
#include "util/atomic_file.h"
#include "eval/evaluator.h"
#include "tests/test_evaluator_util.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw::eval;
using namespace cw_test;
namespace fs = std::filesystem;

namespace {
// f(x) = (x0, x1, 1 − x0 − x1) on two-pixel images: every input below is a multiple of 1/8, so every logit, sum
// and hand-computed mean is exact.
std::shared_ptr<nn::Sequential> linear_model() {
    auto lin = std::make_shared<nn::Linear>(2, 3);
    lin->weight.copy_from(Tensor::from_vector({1, 0, 0, 1, -1, -1}, {3, 2}));
    lin->bias->copy_from(Tensor::from_vector({0, 0, 1}, {3}));
    auto m = std::make_shared<nn::Sequential>(
        std::initializer_list<nn::ModulePtr>{std::make_shared<nn::Flatten>(), lin});
    m->eval();
    return m;
}

// Two batches; class 0 has samples in both (2 + 1), class 1 too (1 + 1), class 2 one.
//   logits: (.75,.125,.125) (.25,.5,.25) (.5,.25,.25) | (.125,.125,.75) (.5,.125,.375) (0,.75,.25)
//   labels:  0               1            0            |  2               0              1
std::vector<EvalBatch> linear_batches() {
    EvalBatch a, b;
    a.images = Tensor::from_vector({.75f, .125f, .25f, .5f, .5f, .25f}, {3, 1, 1, 2});
    a.labels = Tensor::from_labels({0, 1, 0});
    a.indices = {0, 1, 2};
    b.images = Tensor::from_vector({.125f, .125f, .5f, .125f, 0.f, .75f}, {3, 1, 1, 2});
    b.labels = Tensor::from_labels({2, 0, 1});
    b.indices = {3, 4, 5};
    return {a, b};
}

EvalOptions linear_options(const std::string& dir = "") {
    EvalOptions o;
    o.out_dir = dir;
    o.info.classes = {"a", "b", "c"};
    o.info.seed = 3;
    return o;
}

std::vector<double> row(const nlohmann::json& j) { return j.get<std::vector<double>>(); }

EvalOptions blob_options(const std::string& dir) {
    EvalOptions o;
    o.out_dir = dir;
    o.info.seed = 11;
    for (int k = 0; k < kClasses; ++k) o.info.classes.push_back("class" + std::to_string(k));
    return o;
}

}  // namespace

TEST_CASE("evaluator: clean per-class mean logits of a linear model, by hand", "[evaluator]") {
    auto model = linear_model();
    const EvalOutcome out = evaluate(*model, batches_from(linear_batches()), {}, linear_options());
    const nlohmann::json& clean = out.results["evaluations"][0];
    REQUIRE(out.records.clean_pred == std::vector<int32_t>{0, 1, 0, 2, 0, 1});
    const nlohmann::json& mu = clean["per_class_mean_logits"];
    REQUIRE(mu.size() == 3);
    // class 0: (.75 + .5 + .5, .125 + .25 + .125, .125 + .25 + .375) / 3 — divided by its 3 samples over 2 batches
    REQUIRE(row(mu[0]) == std::vector<double>{1.75 / 3, 0.5 / 3, 0.75 / 3});
    REQUIRE(row(mu[1]) == std::vector<double>{0.125, 0.625, 0.25});
    REQUIRE(row(mu[2]) == std::vector<double>{0.125, 0.125, 0.75});
}

TEST_CASE("evaluator: cross-class cosine similarity of the mean logits, by hand", "[evaluator]") {
    auto model = linear_model();
    const EvalOutcome out = evaluate(*model, batches_from(linear_batches()), {}, linear_options());
    const nlohmann::json& s = out.results["evaluations"][0]["cross_class_similarity"];
    // μ0 ∝ (7, 2, 3), μ1 ∝ (1, 5, 2), μ2 ∝ (1, 1, 6)
    const double s01 = 23 / std::sqrt(62.0 * 30), s02 = 27 / std::sqrt(62.0 * 38), s12 = 18 / std::sqrt(30.0 * 38);
    const std::vector<std::vector<double>> want = {{1, s01, s02}, {s01, 1, s12}, {s02, s12, 1}};
    for (int c = 0; c < 3; ++c)
        for (int d = 0; d < 3; ++d) REQUIRE(s["matrix"][c][d].get<double>() == Approx(want[c][d]).epsilon(1e-12));
    REQUIRE(s["mean_other"][0].get<double>() == Approx((s01 + s02) / 2).epsilon(1e-12));
    REQUIRE(s["mean_other"][1].get<double>() == Approx((s01 + s12) / 2).epsilon(1e-12));
    REQUIRE(s["mean_other"][2].get<double>() == Approx((s02 + s12) / 2).epsilon(1e-12));
    REQUIRE(s["max_other"][0].get<double>() == Approx(s02).epsilon(1e-12));   // 0.5563 > 0.5333
    REQUIRE(s["max_other"][1].get<double>() == Approx(s01).epsilon(1e-12));   // 0.5333 > 0.5331
    REQUIRE(s["max_other"][2].get<double>() == Approx(s02).epsilon(1e-12));
}

TEST_CASE("results.json: a class without samples has a null mean-logit row and is left out of s_c", "[evaluator]") {
    EvalRecords r;
    r.index = {0, 1, 2};
    r.label = {0, 1, 1};
    r.clean_pred = {0, 1, 0};
    RunInfo info;
    info.classes = {"a", "b", "c"};
    // class 0: one sample with logits (2, 0, 0); class 1: two with sum (0, 6, 0) → μ1 = (0, 3, 0); class 2: none
    const nlohmann::json j = results_json(info, r, {}, {{2, 0, 0, 0, 6, 0, 0, 0, 0}});
    const nlohmann::json& e = j["evaluations"][0];
    REQUIRE(e["per_class_mean_logits"] == nlohmann::json::parse("[[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], null]"));
    const nlohmann::json& s = e["cross_class_similarity"];
    REQUIRE(s["matrix"] == nlohmann::json::parse("[[1.0, 0.0, null], [0.0, 1.0, null], [null, null, null]]"));
    REQUIRE(s["mean_other"] == nlohmann::json::parse("[0.0, 0.0, null]"));   // over the one defined neighbour
    REQUIRE(s["max_other"] == nlohmann::json::parse("[0.0, 0.0, null]"));
    // without sums there are no mean-logit fields; sums for the wrong number of evaluations are refused
    REQUIRE_FALSE(results_json(info, r, {})["evaluations"][0].contains("per_class_mean_logits"));
    REQUIRE_THROWS_WITH(results_json(info, r, {}, {{}, {}}),
                        Catch::Contains("logit sums for 2 evaluations, expected 1"));
}

TEST_CASE("evaluator: a plain attack's mean logits are the class means of f(x_adv)", "[evaluator]") {
    auto model = linear_model();
    Fgsm fgsm(FgsmConfig{0.125f, false, ModelMode::Eval});   // no random start: the same x_adv every run
    fgsm.set_log(nullptr);
    const std::vector<EvalBatch> batches = linear_batches();
    const EvalOutcome out = evaluate(*model, batches_from(batches), {&fgsm}, linear_options());

    // independently: attack each batch again, one forward at x_adv, average by label
    std::vector<std::vector<double>> sum(3, std::vector<double>(3, 0.0));
    std::vector<int> count(3, 0);
    double moved = 0;
    for (const EvalBatch& b : batches) {
        Rng rng(0);
        const Tensor x_adv = fgsm.run(*model, b.images, b.labels, rng).x_adv;
        NoGradGuard no_grad;
        const std::vector<float> z = model->forward(x_adv).to_vector();
        const std::vector<float> z_clean = model->forward(b.images).to_vector();
        const std::vector<int32_t> y = b.labels.to_int_vector();
        for (size_t i = 0; i < y.size(); ++i) {
            ++count[y[i]];
            for (size_t j = 0; j < 3; ++j) {
                sum[y[i]][j] += z[i * 3 + j];
                moved += std::abs(z[i * 3 + j] - z_clean[i * 3 + j]);
            }
        }
    }
    REQUIRE(moved > 0.1);   // the attack moved the logits, so clean means would not pass
    const nlohmann::json& mu = out.results["evaluations"][1]["per_class_mean_logits"];
    for (int c = 0; c < 3; ++c)
        for (int j = 0; j < 3; ++j) {
            INFO("class " << c << " logit " << j);
            REQUIRE(mu[c][j].get<double>() == Approx(sum[c][j] / count[c]).epsilon(1e-12));
        }
    REQUIRE(out.results["evaluations"][1].contains("cross_class_similarity"));
}

TEST_CASE("evaluator: the model must give one logit per class", "[evaluator]") {
    auto model = linear_model();
    EvalOptions opt = linear_options();
    opt.info.classes.push_back("d");
    REQUIRE_THROWS_WITH(evaluate(*model, batches_from(linear_batches()), {}, opt),
                        Catch::Contains("there are 4 classes") && Catch::Contains("one logit per class"));
}

TEST_CASE("evaluator: mean logits survive interruptions exactly; an ensemble has none", "[evaluator]") {
    nn::Module& model = trained_mlp();
    EvalTempDir tmp("cw_evaluator_logits");
    const BatchSource data = blob_batches(3, 2024);
    BlobAttackSuite suite;
    const EvalOutcome full = evaluate(model, data, suite.list(), blob_options(tmp.sub("full")));
    const auto& ev = full.results["evaluations"];
    REQUIRE(ev.size() == 4);
    for (int e = 0; e < 3; ++e) {
        REQUIRE(ev[e]["per_class_mean_logits"].size() == kClasses);
        REQUIRE(ev[e]["cross_class_similarity"]["mean_other"].size() == kClasses);
    }
    REQUIRE(ev[1]["per_class_mean_logits"] != ev[0]["per_class_mean_logits"]);
    REQUIRE_FALSE(ev[3].contains("per_class_mean_logits"));   // autoattack
    REQUIRE_FALSE(ev[3].contains("cross_class_similarity"));

    // mid-clean-pass, mid-FGSM, mid-PGD, mid-AutoAttack, and a chain of interruptions
    const std::vector<std::vector<int64_t>> plans = {{2}, {4}, {7}, {13}, {1, 3, 4}};
    for (size_t p = 0; p < plans.size(); ++p) {
        const std::string dir = tmp.sub("resume" + std::to_string(p));
        BlobAttackSuite fresh;
        bool first = true;
        for (int64_t stop : plans[p]) {
            EvalOptions opt = blob_options(dir);
            opt.resume = !first;
            opt.stop_after_steps = stop;
            REQUIRE_THROWS_AS(evaluate(model, data, fresh.list(), opt), EvalInterrupted);
            first = false;
        }
        EvalOptions opt = blob_options(dir);
        opt.resume = true;
        const EvalOutcome resumed = evaluate(model, data, fresh.list(), opt);
        INFO("plan " << p);
        for (int e = 0; e < 3; ++e) {
            INFO("evaluation " << e);
            REQUIRE(resumed.results["evaluations"][e]["per_class_mean_logits"] == ev[e]["per_class_mean_logits"]);
            REQUIRE(resumed.results["evaluations"][e]["cross_class_similarity"] == ev[e]["cross_class_similarity"]);
        }
        REQUIRE(timeless(resumed.results) == timeless(full.results));
    }
}

TEST_CASE("evaluator: a state file from before the logit sums still resumes, without mean logits", "[evaluator]") {
    nn::Module& model = trained_mlp();
    EvalTempDir tmp("cw_evaluator_logits");
    const BatchSource data = blob_batches(3, 2024);
    BlobAttackSuite suite;
    nlohmann::json want = timeless(evaluate(model, data, suite.list(), blob_options(tmp.sub("full"))).results);
    for (auto& e : want["evaluations"]) {
        e.erase("per_class_mean_logits");
        e.erase("cross_class_similarity");
    }

    const std::string dir = tmp.sub("old");
    BlobAttackSuite fresh;
    EvalOptions opt = blob_options(dir);
    opt.stop_after_steps = 5;   // in the middle of FGSM
    REQUIRE_THROWS_AS(evaluate(model, data, fresh.list(), opt), EvalInterrupted);
    nlohmann::json state = nlohmann::json::parse(util::read_file_text(dir + "/eval_state.json"));
    REQUIRE(state.contains("logit_sums"));
    state.erase("logit_sums");
    util::write_file_atomic(dir + "/eval_state.json", state.dump());

    std::ostringstream log;
    opt.stop_after_steps = -1;
    opt.resume = true;
    opt.log = &log;
    const EvalOutcome resumed = evaluate(model, data, fresh.list(), opt);
    REQUIRE(log.str().find("keeps no logit sums") != std::string::npos);
    for (const auto& e : resumed.results["evaluations"]) REQUIRE_FALSE(e.contains("per_class_mean_logits"));
    REQUIRE(timeless(resumed.results) == want);

    // sums that do not fit this evaluation are a malformed state, not silently wrong means
    state["logit_sums"] = nlohmann::json::parse("[[1.0, 2.0]]");
    util::write_file_atomic(dir + "/eval_state.json", state.dump());
    REQUIRE_THROWS_WITH(evaluate(model, data, fresh.list(), opt), Catch::Contains("logit_sums do not match"));
}

TEST_CASE("results.json: superclass fields and the superclass confusion, by hand", "[evaluator]") {
    EvalRecords r;
    r.index = {0, 1, 2, 3, 4, 5};
    r.label = {0, 0, 1, 2, 2, 1};
    r.clean_pred = {0, 1, 1, 0, 2, 2};   // fine confusion [[1,1,0],[0,1,1],[1,0,1]]
    r.attacks = {"pgd"};
    r.adv_pred = {{1, 1, 1, 2, 2, 2}};   // [[0,2,0],[0,1,1],[0,0,2]]
    RunInfo info;
    info.classes = {"cat", "car", "dog"};
    info.coarse_classes = {"animal", "vehicle"};
    info.coarse_of = {0, 1, 0};
    AttackSummary s;
    s.name = "pgd";
    const nlohmann::json j = results_json(info, r, {s});
    REQUIRE(j["coarse_classes"] == nlohmann::json::parse(R"(["animal", "vehicle"])"));
    REQUIRE(j["coarse_of"] == nlohmann::json::parse("[0, 1, 0]"));
    // animal = {cat, dog}: [[1+0+1+1, 1+0], [0+1, 1]]
    REQUIRE(j["evaluations"][0]["superclass_confusion"] == nlohmann::json::parse("[[3, 1], [1, 1]]"));
    REQUIRE(j["evaluations"][1]["superclass_confusion"] == nlohmann::json::parse("[[2, 2], [1, 1]]"));

    // no superclasses: no fields; a mismatched coarse_of is refused
    RunInfo plain = info;
    plain.coarse_classes.clear();
    plain.coarse_of.clear();
    const nlohmann::json k = results_json(plain, r, {s});
    REQUIRE_FALSE(k.contains("coarse_classes"));
    REQUIRE_FALSE(k["evaluations"][0].contains("superclass_confusion"));
    info.coarse_of = {0, 1};
    REQUIRE_THROWS_WITH(results_json(info, r, {s}), Catch::Contains("2 superclass indices (coarse_of) for 3 classes"));
}

TEST_CASE("evaluator: superclass confusion of a run with coarse classes", "[evaluator]") {
    auto model = linear_model();
    EvalOptions opt = linear_options();
    opt.info.coarse_classes = {"ab", "c"};
    opt.info.coarse_of = {0, 0, 1};
    const EvalOutcome out = evaluate(*model, batches_from(linear_batches()), {}, opt);
    REQUIRE(out.results["coarse_of"] == nlohmann::json::parse("[0, 0, 1]"));
    // every clean prediction is right: 5 samples of classes a, b and 1 of c
    REQUIRE(out.results["evaluations"][0]["superclass_confusion"] == nlohmann::json::parse("[[5, 0], [0, 1]]"));
}

TEST_CASE("datasets: each class's superclass from the (label, coarse label) pairs", "[evaluator]") {
    data::Dataset d;
    d.name = "toy";
    d.class_names = {"cat", "car", "dog"};
    d.coarse_class_names = {"vehicle", "animal"};
    d.labels = {0, 1, 2, 0, 2};
    d.coarse_labels = {1, 0, 1, 1, 1};
    REQUIRE(data::coarse_of_fine(d) == std::vector<int32_t>{1, 0, 1});

    data::Dataset two = d;
    two.coarse_labels = {1, 0, 1, 0, 1};   // image 3, a cat, says vehicle
    REQUIRE_THROWS_AS(data::coarse_of_fine(two), data::DataError);
    REQUIRE_THROWS_WITH(data::coarse_of_fine(two),
                        Catch::Contains("class 0 (cat) is in two superclasses: 1 (image 0) and 0 (image 3)"));

    data::Dataset missing = d;
    missing.labels = {0, 1, 0, 0, 0};
    REQUIRE_THROWS_WITH(data::coarse_of_fine(missing), Catch::Contains("class 2 (dog) has no image"));

    data::Dataset none = d;
    none.coarse_labels.clear();
    REQUIRE(data::coarse_of_fine(none).empty());
}
