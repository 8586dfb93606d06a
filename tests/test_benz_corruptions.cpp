// experiments/benz_corruptions (Benz et al. §3.4) and its analysis (protocols/corruption_ranking.h): the ranking of
// the classes under each corruption against the ranking under the attack on hand-made per-class accuracies whose
// Spearman values are worked out below, the reading of a corruption results.json (only the per-corruption pooled
// entries), the families, and the binary end to end on the synthetic set with --resume and its flag errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "eval/agreement.h"
#include "protocols/corruption_ranking.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;
using namespace cw::protocols;

namespace {

// Four classes. Ranks (1 = lowest): clean {4,3,2,1}; attacked {4,1,3,2}.
ArmCorruptions hand_arm() {
    ArmCorruptions a;
    a.arm = "pgd_at";
    a.clean = {0.9, 0.8, 0.6, 0.5};
    a.attacked = {0.5, 0.1, 0.3, 0.2};
    a.clean_accuracy = 0.7;
    a.attacked_accuracy = 0.275;
    a.corruptions = {{"fog", 0.26, {0.4, 0.1, 0.35, 0.2}},              // ranks {4,1,3,2}: the attack's
                     {"gaussian_noise", 0.55, {0.7, 0.6, 0.5, 0.4}},    // ranks {4,3,2,1}: clean's
                     {"contrast", 0.30, {0.3, 0.3, 0.3, 0.3}}};         // constant: no ranking
    return a;
}

nlohmann::json evaluation(const std::string& name, double accuracy, const std::vector<double>& per_class) {
    return {{"name", name}, {"accuracy", accuracy}, {"per_class_accuracy", per_class}};
}

const char* kTiny =
    "--dataset synthetic --arch lenet5 --train-n 300 --eval-n 60 --epoch-eval-n 30 --epochs 2 --attack-steps 2 "
    "--eval-steps 2 --batch-size 50 --optimizer adam --lr 0.003 --wd 0 --device cpu --seed 1 "
    "--corruptions gaussian_noise,fog --severities 1,3";

}  // namespace

TEST_CASE("benz_corruptions: Spearman per corruption against the attack and clean, by hand", "[benz_corruptions]") {
    const CorruptionRanking r = rank_corruptions(hand_arm());
    REQUIRE(r.rho_attack.size() == 3);
    // fog vs attack: identical ranks → 1. fog vs clean: d = {0,−2,1,1}, Σd² = 6, ρ = 1 − 6·6/(4·15) = 0.4.
    CHECK(r.rho_attack[0] == Approx(1.0));
    CHECK(r.rho_clean[0] == Approx(0.4));
    // gaussian_noise ranks as clean does: the reverse.
    CHECK(r.rho_attack[1] == Approx(0.4));
    CHECK(r.rho_clean[1] == Approx(1.0));
    // A constant column ranks nothing: NaN, not 0.
    CHECK(std::isnan(r.rho_attack[2]));
    CHECK(std::isnan(r.rho_clean[2]));
    // Worst classes: 1 under fog, 3 under noise, 0 (lowest index) on contrast's tie.
    CHECK(r.worst == std::vector<int>{1, 3, 0});
    // Per class, each corruption once: {1.4, 1.0, 1.15, 0.9} / 3, ranks {4,2,3,1}.
    REQUIRE(r.average.size() == 4);
    CHECK(r.average[0] == Approx(1.4 / 3));
    CHECK(r.average[1] == Approx(1.0 / 3));
    CHECK(r.average[2] == Approx(1.15 / 3));
    CHECK(r.average[3] == Approx(0.9 / 3));
    // average vs attack {4,1,3,2}: d = {0,1,0,−1}, ρ = 1 − 6·2/60 = 0.8; vs clean {4,3,2,1}: d = {0,−1,1,0}, 0.8.
    CHECK(r.average_rho_attack == Approx(0.8));
    CHECK(r.average_rho_clean == Approx(0.8));
    // The mean of the defined ρ: (1 + 0.4) / 2; contrast's NaN is left out, not counted as 0.
    CHECK(r.mean_rho_attack == Approx(0.7));
    // clean vs attack: d = {0,2,−1,−1}, ρ = 0.4.
    CHECK(r.clean_rho_attack == Approx(0.4));
    CHECK(r.average_accuracy == Approx((0.26 + 0.55 + 0.30) / 3));
    // Families evaluated: no blur here, so three, each its corruptions' mean accuracy.
    CHECK(r.families == std::vector<std::string>{"noise", "weather", "digital"});
    CHECK(r.family_accuracy == std::vector<double>{0.55, 0.26, 0.30});
}

TEST_CASE("benz_corruptions: the families, Hendrycks & Dietterich's four extra corruptions included",
          "[benz_corruptions]") {
    CHECK(corruption_family("speckle_noise") == "noise");
    CHECK(corruption_family("gaussian_blur") == "blur");
    CHECK(corruption_family("glass_blur") == "blur");
    CHECK(corruption_family("spatter") == "weather");
    CHECK(corruption_family("brightness") == "weather");
    CHECK(corruption_family("saturate") == "digital");
    CHECK(corruption_family("elastic_transform") == "digital");
    CHECK_THROWS_WITH(corruption_family("rain"), Catch::Matchers::Contains("rain"));
}

TEST_CASE("benz_corruptions: only the per-corruption pooled entries of a results.json are read", "[benz_corruptions]") {
    const nlohmann::json attack = {{"evaluations", {evaluation("clean", 0.5, {0.6, 0.4}),
                                                    evaluation("pgd20", 0.2, {0.3, 0.1})}}};
    const nlohmann::json corr = {{"evaluations",
                                  {evaluation("clean", 0.5, {0.6, 0.4}), evaluation("corruptions", 0.3, {0.4, 0.2}),
                                   evaluation("corruption:fog", 0.35, {0.5, 0.2}),
                                   evaluation("corruption:fog:3", 0.1, {0.1, 0.1}),
                                   evaluation("corruption:spatter", 0.25, {0.3, 0.2}),
                                   evaluation("corruption:spatter:3", 0.9, {0.9, 0.9})}}};
    const ArmCorruptions a = read_arm_corruptions("x", attack, "pgd20", "a.json", corr, "c.json");
    REQUIRE(a.corruptions.size() == 2);
    CHECK(a.corruptions[0].corruption == "fog");
    CHECK(a.corruptions[0].accuracy == Approx(0.35));
    CHECK(a.corruptions[0].per_class == std::vector<double>{0.5, 0.2});
    CHECK(a.corruptions[1].corruption == "spatter");
    CHECK(a.attacked == std::vector<double>{0.3, 0.1});
    CHECK(a.clean == std::vector<double>{0.6, 0.4});
    CHECK_THROWS_WITH(read_arm_corruptions("x", attack, "cw20", "a.json", corr, "c.json"),
                      Catch::Matchers::Contains("a.json") && Catch::Matchers::Contains("cw20"));
}

TEST_CASE("benz_corruptions: natural and PGD-AT under corruptions on the synthetic set, --resume", "[benz_corruptions]") {
    const fs::path out = fresh_dir("cw_benz_corruptions_test");
    const Output o = run_experiment("benz_corruptions", std::string(kTiny) + " --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    for (const std::string arm : {"natural", "pgd_at"}) {
        INFO(arm);
        const nlohmann::json attack = contract_results(out / arm / "eval_last" / "results.json");
        const nlohmann::json corr = contract_results(out / arm / "eval_last_corruptions" / "results.json");
        CHECK(attack.at("method") == arm);
        CHECK(corr.at("num_examples") == 60);
        for (const char* e : {"corruption:gaussian_noise:1", "corruption:gaussian_noise:3", "corruption:fog"})
            CHECK(cw::report::find_evaluation(corr, e) != nullptr);
        CHECK(cw::report::find_evaluation(corr, "corruption:fog:5") == nullptr);   // --severities 1,3 only
    }
    // corruption_ranking.json: its numbers are the results' numbers and their Spearman.
    const nlohmann::json j = nlohmann::json::parse(read_text(out / "corruption_ranking.json"));
    REQUIRE(j.at("arms").size() == 2);
    const nlohmann::json& pgd = j.at("arms")[1];
    CHECK(pgd.at("arm") == "pgd_at");
    const nlohmann::json attack = contract_results(out / "pgd_at/eval_last/results.json");
    const nlohmann::json corr = contract_results(out / "pgd_at/eval_last_corruptions/results.json");
    const auto robust = cw::report::per_class_values(*cw::report::find_evaluation(attack, "pgd20"), "per_class_accuracy");
    REQUIRE(pgd.at("corruptions").size() == 2);
    for (size_t i = 0; i < 2; ++i) {
        const nlohmann::json& c = pgd.at("corruptions")[i];
        const std::string name = c.at("corruption");
        const auto want = cw::report::per_class_values(*cw::report::find_evaluation(corr, "corruption:" + name),
                                                       "per_class_accuracy");
        const auto got = cw::report::per_class_values(c, "per_class_accuracy");
        REQUIRE(got.size() == 10);
        for (size_t k = 0; k < 10; ++k) CHECK(got[k] == Approx(want[k]));
        const double rho = cw::fairness::spearman(want, robust);
        if (std::isnan(rho)) CHECK(c.at("spearman_vs_attack").is_null());
        else CHECK(c.at("spearman_vs_attack").get<double>() == Approx(rho));
    }
    CHECK(pgd.at("families").contains("noise"));
    CHECK(pgd.at("families").contains("weather"));
    CHECK(!pgd.at("families").contains("blur"));
    const std::string md = read_text(out / "corruption_ranking.md");
    CHECK(md.find("## natural vs pgd_at per corruption") != std::string::npos);
    CHECK(md.find("| fog | weather |") != std::string::npos);
    CHECK(read_text(out / "summary.md").find("[corruption_ranking.md](corruption_ranking.md)") != std::string::npos);
    CHECK(fs::exists(out / "corruption_ranking.html"));

    const Output again = run_experiment("benz_corruptions", std::string(kTiny) + " --resume --out " + out.string());
    INFO(again.text);
    REQUIRE(again.code == 0);
    CHECK(again.text.find("pgd_at finished before; skipped") != std::string::npos);
    CHECK(again.text.find("epoch 1/") == std::string::npos);
    CHECK(read_text(out / "corruption_ranking.md") == md);
    // The summary is rewritten with one link, not a second one appended.
    const std::string summary = read_text(out / "summary.md");
    CHECK(summary.find("corruption_ranking.md") == summary.rfind("[corruption_ranking.md]") + 1);
    fs::remove_all(out);
}

TEST_CASE("benz_corruptions: a bad --corruptions, --severities or --arms is one line naming the flag",
          "[benz_corruptions]") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--corruptions gaussian_noise,fogg", "--corruptions"},
        {"--corruptions ''", "--corruptions"},
        {"--severities 0,6", "--severities"},
        {"--arms natural,bogus", "--arms"}};
    const fs::path out = fresh_dir("cw_bc_bad");
    for (const auto& [args, flag] : cases) {
        INFO(args);
        const Output o = run_experiment("benz_corruptions", "--dataset synthetic --device cpu --out " + out.string() + " " + args,
                                        "2>&1 >/dev/null");
        CHECK(o.code != 0);
        CHECK(line_count(o.text) == 1);
        CHECK(o.text.find(flag) != std::string::npos);
    }
    CHECK(!fs::exists(out / "natural" / "history.csv"));   // nothing trained
    fs::remove_all(out);
}

TEST_CASE("benz_corruptions: --help lists the common, job and corruption flags", "[benz_corruptions]") {
    const Output o = run_experiment("benz_corruptions", "--help");
    REQUIRE(o.code == 0);
    for (const std::string& flag : expected_help_flags())
        if (flag != "--methods") CHECK(o.text.find(flag) != std::string::npos);
    for (const char* flag : {"--arms", "--corruptions", "--severities"}) CHECK(o.text.find(flag) != std::string::npos);
    CHECK(o.text.find("--final-corruptions") == std::string::npos);   // replaced by --corruptions
}
