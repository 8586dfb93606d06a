// protocols/class_similarity on hand-made confusion matrices and a hand-made results.json (every number worked out
// by hand), and experiments/benz_similarity end to end: on the synthetic set through its --quick path, and on a
// tiny CIFAR-100 fixture (all 100 classes, five per superclass) through the superclass path; a missing CIFAR-100 is
// the loader's one line.
#include <catch2/catch.hpp>

#include <cmath>

#include "eval/agreement.h"
#include "protocols/class_similarity.h"
#include "tests/test_datasets_fixtures.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;
using namespace cw::protocols;

namespace {
// Five classes, superclasses {0, 1} and {2, 3, 4}.
const cw::fairness::Confusion kConfusion = {{5, 2, 1, 0, 0},
                                            {0, 6, 0, 0, 0},
                                            {0, 0, 4, 1, 1},
                                            {1, 0, 3, 2, 0},
                                            {0, 0, 0, 0, 6}};
const std::vector<int32_t> kCoarse = {0, 0, 1, 1, 1};

nlohmann::json evaluation(const std::string& name, const std::vector<double>& accuracy, const nlohmann::json& mean_other,
                          const nlohmann::json& matrix) {
    return {{"name", name},
            {"per_class_accuracy", accuracy},
            {"confusion", kConfusion},
            {"cross_class_similarity", {{"matrix", matrix}, {"mean_other", mean_other}, {"max_other", mean_other}}}};
}

const char* kTinySimilarity =
    "--quick --train-n 300 --eval-n 60 --epoch-eval-n 30 --epochs 1 --attack-steps 2 --eval-steps 2 "
    "--batch-size 50 --device cpu --seed 1";
}  // namespace

TEST_CASE("benz similarity: share of errors inside the true superclass against chance", "[benz]") {
    const SuperclassShare s = superclass_share(kConfusion, kCoarse);
    CHECK(s.errors == 9);
    CHECK(s.within == 7);   // 0→1 twice; 2→3, 2→4; 3→2 three times
    CHECK(s.share == Approx(7.0 / 9));
    // Chance: class 0's 3 errors × (2−1)/4, class 2's 2 × (3−1)/4, class 3's 4 × (3−1)/4 → 3.75 of 9.
    CHECK(s.chance == Approx(3.75 / 9));
    // CIFAR-100's shape: five classes in each of 20 superclasses → 4/99 whatever the errors.
    cw::fairness::Confusion big(100, std::vector<int64_t>(100, 0));
    std::vector<int32_t> coarse(100);
    for (int k = 0; k < 100; ++k) coarse[k] = k / 5, big[k][(k * 7 + 1) % 100] = k % 3 + 1;
    CHECK(superclass_share(big, coarse).chance == Approx(4.0 / 99));
    CHECK(std::isnan(superclass_share({{3, 0}, {0, 2}}, {0, 1}).share));
    CHECK_THROWS_WITH(superclass_share(kConfusion, {0, 1}), Catch::Contains("2 superclass indices for 5 classes"));
}

TEST_CASE("benz similarity: most-confused pairs by rate, and how symmetric the confusion is", "[benz]") {
    const auto pairs = most_confused_pairs(kConfusion, 3);
    REQUIRE(pairs.size() == 3);
    // Rates: class 0 has 8 samples, the others 6. (2,3): 1/6 + 3/6; (0,1): 2/8; then (0,3) and (2,4) tie at 1/6.
    CHECK((pairs[0].a == 2 && pairs[0].b == 3));
    CHECK(pairs[0].rate_ab == Approx(1.0 / 6));
    CHECK(pairs[0].rate_ba == Approx(0.5));
    CHECK((pairs[1].a == 0 && pairs[1].b == 1));
    CHECK(pairs[1].rate_ab == Approx(0.25));
    CHECK((pairs[2].a == 0 && pairs[2].b == 3));
    CHECK(pairs[2].rate_ba == Approx(1.0 / 6));
    // Only (2,3) runs both ways: 2·min(1/6, 1/2) of the total rate 1.375.
    CHECK(symmetric_share(kConfusion) == Approx((1.0 / 3) / 1.375));
    CHECK(symmetric_share({{2, 1}, {1, 2}}) == Approx(1.0));
    CHECK(std::isnan(symmetric_share({{2, 0}, {0, 2}})));
}

TEST_CASE("agreement: Pearson's r over the defined entries", "[fairness][benz]") {
    CHECK(cw::fairness::pearson({1, 2, 3, 4}, {2, 4, 5, 9}) == Approx(11 / std::sqrt(130.0)));
    CHECK(cw::fairness::pearson({1, 2, NAN, 3, 4}, {2, 4, 100, 5, 9}) == Approx(11 / std::sqrt(130.0)));
    CHECK(std::isnan(cw::fairness::pearson({1, 1, 1}, {1, 2, 3})));
    CHECK(std::isnan(cw::fairness::pearson({1}, {2})));
}

TEST_CASE("benz similarity: a results.json's similarity, superclasses and the relation to vulnerability", "[benz]") {
    // Cosines: within superclasses (0,1) .8, (2,3) .6, (2,4) .4, (3,4) .2 → .5; the six pairs across → .1.
    const nlohmann::json matrix = {{1, .8, .1, .2, .3},
                                   {.8, 1, -.1, 0, .1},
                                   {.1, -.1, 1, .6, .4},
                                   {.2, 0, .6, 1, .2},
                                   {.3, .1, .4, .2, 1}};
    nlohmann::json results = {{"classes", {"a", "b", "c", "d", "e"}}, {"coarse_of", kCoarse}};
    results["evaluations"] = {
        evaluation("clean", {.8, .9, .7, .5, 1.0}, {.5, .2, .4, .9, .1}, matrix),
        evaluation("pgd20", {.3, .6, .4, .1, .7}, {.5, nullptr, .4, .9, .1}, matrix)};
    const SimilarityAnalysis s = analyse_similarity(results, "pgd20", "r.json", 3);
    REQUIRE(s.clean.superclass);
    CHECK(s.clean.superclass->share == Approx(7.0 / 9));
    CHECK(s.clean.cosine_within == Approx(0.5));
    CHECK(s.clean.cosine_across == Approx(0.1));
    REQUIRE(s.clean.similar.size() == 3);
    CHECK((s.clean.similar[0].a == 0 && s.clean.similar[0].b == 1));
    CHECK((s.clean.similar[2].a == 2 && s.clean.similar[2].b == 4));
    REQUIRE(s.relations.size() == 8);
    // clean mean_other (.5 .2 .4 .9 .1) against the robust error (.7 .4 .6 .9 .3): the same order, ρ = 1;
    // r = .292 / √(.388 · .228).
    const Relation& r = s.relations[1];
    CHECK(r.similarity == "clean mean_other");
    CHECK(r.vulnerability == "robust error (pgd20)");
    CHECK(r.spearman == Approx(1.0));
    CHECK(r.pearson == Approx(0.292 / std::sqrt(0.388 * 0.228)));
    CHECK(r.classes == 5);
    // The attacked mean_other has no value for class b: four classes. (.5 .4 .9 .1) against (.7 .6 .9 .3).
    const Relation& adv = s.relations[5];
    CHECK(adv.similarity == "pgd20 mean_other");
    CHECK(adv.classes == 4);
    CHECK(adv.spearman == Approx(1.0));
    const nlohmann::json j = similarity_json(s);
    CHECK(j.at("clean").at("superclass").at("chance_share").get<double>() == Approx(3.75 / 9));
    CHECK(j.at("per_class")[1].at("attacked_mean_other").is_null());
    const std::string md = similarity_markdown("natural", s);
    CHECK(md.find("| clean | 9 | 7 | 77.8 | 41.7 | 0.50 / 0.10 |") != std::string::npos);
    CHECK(md.find("| c ↔ d | 16.7 | 50.0 | 0.33 |") != std::string::npos);
    CHECK_THROWS_WITH(analyse_similarity(results, "apgd-ce", "r.json"), Catch::Contains("r.json: no evaluation named 'apgd-ce'"));
}

TEST_CASE("benz_similarity: natural and PGD-AT on the synthetic set, no superclasses", "[benz][experiments]") {
    const fs::path out = fresh_dir("cw_benz_similarity_test");
    const Output o = run_experiment("benz_similarity", std::string(kTinySimilarity) + " --dataset synthetic --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    const nlohmann::json sim = nlohmann::json::parse(read_text(out / "similarity.json"));
    for (const std::string arm : {"natural", "pgd_at"}) {
        INFO(arm);
        const nlohmann::json r = contract_results(out / arm / "eval_last" / "results.json");
        const auto& a = sim.at("arms").at(arm);
        CHECK_FALSE(a.at("clean").contains("superclass"));
        REQUIRE(a.at("relations").size() == 8);
        // The per-class values are the results.json's.
        const auto* pgd = cw::report::find_evaluation(r, "pgd20");
        REQUIRE(pgd);
        const auto acc = cw::report::per_class_values(*pgd, "per_class_accuracy");
        const auto mo = cw::report::per_class_values(r.at("evaluations")[0].at("cross_class_similarity"), "mean_other");
        for (size_t k = 0; k < 10; ++k) {
            CHECK(a.at("per_class")[k].at("robust_error").get<double>() == Approx(1 - acc[k]));
            CHECK(a.at("per_class")[k].at("clean_mean_other").get<double>() == Approx(mo[k]));
        }
    }
    CHECK(read_text(out / "similarity.md").find("No superclasses in synthetic") != std::string::npos);
    const std::string summary = read_text(out / "summary.md");
    CHECK(summary.find("## Benz et al. §3.2") != std::string::npos);
    CHECK(summary.find("[similarity.md](similarity.md)") != std::string::npos);
    fs::remove_all(out);
}

TEST_CASE("benz_similarity: CIFAR-100 fixture through the superclass path; a missing CIFAR-100 is one line",
          "[benz][experiments]") {
    cw_fixtures::TempDir data;
    // Two training and one test image per class; fine class k in superclass k / 5 (CIFAR-100's five per superclass).
    std::vector<int> fine_train, coarse_train, fine_test, coarse_test;
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 100; ++k) {
            (r < 2 ? fine_train : fine_test).push_back(k);
            (r < 2 ? coarse_train : coarse_test).push_back(k / 5);
        }
    cw_fixtures::write_file(data / "cifar-100-binary/train.bin", cw_fixtures::make_cifar_records({coarse_train, fine_train}));
    cw_fixtures::write_file(data / "cifar-100-binary/test.bin", cw_fixtures::make_cifar_records({coarse_test, fine_test}, 500));
    const fs::path out = fresh_dir("cw_benz_similarity_c100");
    const Output o = run_experiment("benz_similarity", "--quick --train-n 200 --eval-n 100 --epoch-eval-n 100 --epochs 1 "
                                    "--attack-steps 1 --eval-steps 1 --batch-size 50 --device cpu --seed 1 --data-dir " +
                                    data.path() + " --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    const nlohmann::json sim = nlohmann::json::parse(read_text(out / "similarity.json"));
    for (const std::string arm : {"natural", "pgd_at"}) {
        INFO(arm);
        const nlohmann::json r = contract_results(out / arm / "eval_last" / "results.json");
        CHECK(r.at("dataset") == "cifar100");
        REQUIRE(r.contains("coarse_of"));
        for (const std::string part : {"clean", "attacked"}) {
            const auto& sc = sim.at("arms").at(arm).at(part).at("superclass");
            // Recount from the results.json's confusion.
            const auto& m = r.at("evaluations")[part == "clean" ? 0 : 1].at("confusion");
            int64_t errors = 0, within = 0;
            for (int k = 0; k < 100; ++k)
                for (int j = 0; j < 100; ++j)
                    if (j != k) errors += m[k][j].get<int64_t>(), within += j / 5 == k / 5 ? m[k][j].get<int64_t>() : 0;
            CHECK(sc.at("errors") == errors);
            CHECK(sc.at("within") == within);
            if (errors > 0) CHECK(sc.at("chance_share").get<double>() == Approx(4.0 / 99));
        }
    }
    CHECK(read_text(out / "similarity.md").find("within the true superclass") != std::string::npos);

    cw_fixtures::TempDir empty;
    const Output missing = run_experiment("benz_similarity", "--quick --device cpu --data-dir " + empty.path() +
                                          " --out " + (out / "missing").string(), "2>&1 >/dev/null");
    CHECK(missing.code != 0);
    CHECK(line_count(missing.text) == 1);
    CHECK(missing.text.find("make data DATASET=cifar100") != std::string::npos);
    fs::remove_all(out);
}
