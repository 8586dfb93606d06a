// Class-wise metrics (docs/protocols/metrics.md) on a hand-made record set whose confusion matrices, per-class accuracies,
// CFP scores and boundary errors were worked out by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "eval/results_json.h"
#include "eval/class_metrics.h"

using namespace cw;
using namespace cw::eval;
using namespace cw::fairness;

namespace {
// 3 classes; sample 6 (class 1) is wrong on clean data but right under the attack.
const std::vector<int32_t> kLabel = {0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
const std::vector<int32_t> kClean = {0, 0, 0, 1, 1, 1, 2, 2, 2, 1};
const std::vector<int32_t> kAdv = {0, 1, 1, 1, 1, 2, 1, 2, 0, 0};
}  // namespace

TEST_CASE("class metrics of a hand-made record set", "[attacks]") {
    const ClassMetrics clean = class_metrics(kLabel, kClean, 3);
    REQUIRE(clean.confusion == Confusion{{3, 1, 0}, {0, 2, 1}, {0, 1, 2}});
    REQUIRE(clean.class_counts == std::vector<int64_t>{4, 3, 3});
    REQUIRE(clean.accuracy == Approx(0.7));
    REQUIRE(clean.per_class_accuracy[0] == Approx(0.75));
    REQUIRE(clean.per_class_accuracy[1] == Approx(2.0 / 3));
    REQUIRE(clean.per_class_accuracy[2] == Approx(2.0 / 3));
    REQUIRE(clean.worst_class == 1);   // tie between 1 and 2: the lower index
    REQUIRE(clean.best_class == 0);
    // false positives: class 0 none, class 1 two (from rows 0 and 2), class 2 one; three errors in all
    REQUIRE(clean.cfp[0] == Approx(0.0));
    REQUIRE(clean.cfp[1] == Approx(2.0 / 3));
    REQUIRE(clean.cfp[2] == Approx(1.0 / 3));
    REQUIRE(clean.cfn == std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3});
    REQUIRE(clean.one_vs_rest_accuracy[0] == Approx(0.9));   // (TP 3 + TN 6) / 10
    REQUIRE(clean.sd == Approx(0.0392837).epsilon(1e-4));
    REQUIRE(clean.spread == Approx(0.75 - 2.0 / 3));
    REQUIRE(clean.worst10_accuracy == Approx(2.0 / 3));

    const ClassMetrics adv = class_metrics(kLabel, kAdv, 3);
    REQUIRE(adv.confusion == Confusion{{1, 3, 0}, {0, 2, 1}, {2, 0, 1}});
    REQUIRE(adv.accuracy == Approx(0.4));
    REQUIRE(adv.worst_class == 0);
    REQUIRE(adv.best_class == 1);
    REQUIRE(adv.cfp[0] == Approx(2.0 / 6));
    REQUIRE(adv.cfp[1] == Approx(3.0 / 6));
    REQUIRE(adv.cfp[2] == Approx(1.0 / 6));

    const auto bdy = boundary_error(clean, adv);   // FRL code definition A_nat − A_rob
    REQUIRE(bdy[0] == Approx(0.5));
    REQUIRE(bdy[1] == Approx(0.0).margin(1e-12));
    REQUIRE(bdy[2] == Approx(1.0 / 3));
    const auto exact = boundary_error_exact(kLabel, kClean, kAdv, 3);   // differs on class 1
    REQUIRE(exact[0] == Approx(0.5));
    REQUIRE(exact[1] == Approx(1.0 / 3));
    REQUIRE(exact[2] == Approx(1.0 / 3));
}

TEST_CASE("class metrics edge cases: no errors, an empty class, bad labels", "[attacks]") {
    const ClassMetrics perfect = class_metrics({0, 1, 1}, {0, 1, 1}, 3);
    REQUIRE(perfect.cfp == std::vector<double>{0, 0, 0});   // nothing misclassified: all zero
    REQUIRE(std::isnan(perfect.per_class_accuracy[2]));     // class 2 has no samples
    REQUIRE(perfect.worst_class == 0);
    REQUIRE(perfect.best_class == 0);
    REQUIRE(perfect.accuracy == 1.0);
    REQUIRE_THROWS_WITH(class_metrics({0, 3}, {0, 1}, 3), Catch::Contains("label 3"));
    REQUIRE_THROWS(class_metrics({0, 1}, {0}, 3));
}

TEST_CASE("results.json from records has every contract field and the hand-computed values", "[attacks]") {
    EvalRecords r;
    for (size_t i = 0; i < kLabel.size(); ++i) r.index.push_back(static_cast<int64_t>(100 + i));
    r.label = kLabel;
    r.clean_pred = kClean;
    r.attacks = {"pgd20"};
    r.adv_pred = {kAdv};
    RunInfo info;
    info.dataset = "toy";
    info.split = "test";
    info.arch = "mlp";
    info.checkpoint = "none";
    info.method = "pgd_at";
    info.device = "cpu";
    info.classes = {"cat", "dog", "frog"};
    AttackSummary s;
    s.name = "pgd20";
    s.config = {{"type", "pgd"}, {"steps", 20}};
    const nlohmann::json j = results_json(info, r, {s});

    for (const auto& f : results_required_fields()) REQUIRE(j.contains(f));
    REQUIRE(j["schema"] == "classwise.results/1");
    REQUIRE(j["num_examples"] == 10);
    REQUIRE(j["classes"].size() == 3);
    REQUIRE(j["evaluations"].size() == 2);
    for (const auto& f : evaluation_required_fields(false)) REQUIRE(j["evaluations"][0].contains(f));
    for (const auto& f : evaluation_required_fields(true)) REQUIRE(j["evaluations"][1].contains(f));
    const auto& e = j["evaluations"][1];
    REQUIRE(e["name"] == "pgd20");
    REQUIRE(e["attack"]["type"] == "pgd");
    REQUIRE(e["accuracy"].get<double>() == Approx(0.4));
    REQUIRE(e["worst_class"] == 0);
    REQUIRE(e["confusion"] == nlohmann::json::parse("[[1,3,0],[0,2,1],[2,0,1]]"));
    REQUIRE(e["per_class_boundary_error"][0].get<double>() == Approx(0.5));
    REQUIRE(e["cfp"][1].get<double>() == Approx(0.5));
    REQUIRE(j["evaluations"][0]["per_class_accuracy"][0].get<double>() == Approx(0.75));
}

TEST_CASE("per-sample records round-trip through CSV", "[attacks]") {
    EvalRecords r;
    r.index = {5, 9};
    r.label = {1, 0};
    r.clean_pred = {1, 1};
    r.attacks = {"fgsm", "apgd-ce"};
    r.adv_pred = {{0, 1}, {2, 1}};
    const std::string csv = records_csv(r);
    REQUIRE(csv.rfind("index,label,clean_pred,fgsm_pred,apgd-ce_pred\n5,1,1,0,2\n", 0) == 0);
    const EvalRecords back = parse_records_csv(csv);
    REQUIRE(back.index == r.index);
    REQUIRE(back.attacks == r.attacks);
    REQUIRE(back.adv_pred == r.adv_pred);
}

// A damaged records.csv (read back by fairtat_cfp) is named with the line and what is wrong. Seen failing before:
// a non-number stopped it with the bare message "stoll", and no message named the file.
TEST_CASE("records CSV: a malformed table names the file, the line and the cell", "[attacks]") {
    const std::string header = "index,label,clean_pred,fgsm_pred\n";
    auto message = [](const std::string& csv) {
        try {
            parse_records_csv(csv, "run/records.csv");
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(message(header + "5,1,1,0\n9,0,x,1\n") == "run/records.csv: line 3: 'x' is not an integer");
    CHECK(message(header + "5,1,1,0\n9,0,1,1.5\n") == "run/records.csv: line 3: '1.5' is not an integer");
    CHECK(message(header + "5,1,1\n") == "run/records.csv: line 2 has 3 fields, the header 4");
    CHECK(message(header + "5,1,1,99999999999\n") == "run/records.csv: line 2: '99999999999' is not an integer");
    CHECK(message("index,label\n") == "run/records.csv: header must start with index,label,clean_pred");
    CHECK(message("") == "run/records.csv: empty (expected the header index,label,clean_pred,...)");
    CHECK(message(header + "5,1,1,0\n\n9,0,1,1\n") == "accepted");   // a blank line is skipped
}
