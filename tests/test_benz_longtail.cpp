// experiments/benz_longtail (Benz et al. §3.3) and its parts: the critical-class table on hand-made per-class
// accuracies (changes against the baseline found by name, the others' mean without the critical class and without
// classes lacking samples, the worst class's lowest index on ties), the --critical-class / --critical-weights /
// --arms rules, the arms' critical classes, and the binary end to end on the synthetic set with --resume.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "protocols/longtail_arms.h"
#include "protocols/longtail_table.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;
using namespace cw::protocols;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const std::vector<std::string> kClasses = {"plane", "car", "cat", "dog"};

// Critical class 2 ("cat"). The baseline is listed second: it is found by name, not position.
// pgd_at: mean 0.425, worst cat 0.2.
std::vector<ArmAccuracy> hand_arms() {
    return {{"cs_critical_w5", {0.5, 0.4, 0.35, 0.45}},
            {"pgd_at", {0.6, 0.4, 0.2, 0.5}},
            {"cosine_reg", {0.7, 0.1, 0.2, 0.6}},
            {"ldam_drw", {kNaN, 0.4, 0.3, 0.3}}};
}

const char* kTiny =
    "--dataset synthetic --arch lenet5 --train-n 300 --eval-n 60 --epoch-eval-n 30 --epochs 2 --attack-steps 2 "
    "--eval-steps 2 --batch-size 50 --optimizer adam --lr 0.003 --wd 0 --device cpu --seed 1 --final-checkpoints last "
    "--arms pgd_at,cs_critical_w2,target_critical --critical-weights 2 --critical-class 'brown square'";

}  // namespace

TEST_CASE("benz_longtail: the critical-class table, by hand", "[benz_longtail]") {
    const CriticalTable t = critical_table("pgd20", hand_arms(), "pgd_at", 2);
    REQUIRE(t.rows.size() == 4);
    CHECK(t.baseline == 1);
    const CriticalRow& w5 = t.rows[0];
    CHECK(w5.critical == Approx(0.35));
    CHECK(w5.critical_delta == Approx(0.15));
    CHECK(w5.average == Approx(0.425));
    CHECK(w5.average_delta == Approx(0.0).margin(1e-12));
    CHECK(w5.worst == 2);
    CHECK(w5.worst_delta == Approx(0.15));          // 0.35 − the baseline's worst 0.2
    // The others (plane, car, dog): (−0.1 + 0 − 0.05) / 3. With cat's +0.15 counted it would read 0.
    CHECK(w5.others_delta == Approx(-0.05));
    const CriticalRow& base = t.rows[1];
    CHECK(base.critical_delta == 0);
    CHECK(base.others_delta == 0);
    const CriticalRow& cos = t.rows[2];
    CHECK(cos.critical_delta == Approx(0.0).margin(1e-12));
    CHECK(cos.average_delta == Approx(-0.025));
    CHECK(cos.worst == 1);                           // the worst class moved: car 0.1
    CHECK(cos.worst_delta == Approx(-0.1));
    CHECK(cos.others_delta == Approx((0.1 - 0.3 + 0.1) / 3));
    // A class without samples (plane: NaN) is left out of the mean and of the others' change; ties → lowest index.
    const CriticalRow& ldam = t.rows[3];
    CHECK(ldam.average == Approx(1.0 / 3));
    CHECK(ldam.worst == 2);
    CHECK(ldam.others_delta == Approx(-0.1));        // car 0, dog −0.2; plane skipped

    const std::string md = critical_markdown(t, kClasses);
    CHECK(md.find("| arm | **cat** (critical) | Δ **cat** |") != std::string::npos);
    CHECK(md.find("| cs_critical_w5 | **35.0** | **+15.0** | 42.5 | 0.0 | **cat** 35.0 | +15.0 | −5.0 |") !=
          std::string::npos);
    CHECK(md.find("| pgd_at | **20.0** | **–** | 42.5 | – | **cat** 20.0 | – | – |") != std::string::npos);
    CHECK(md.find("| cosine_reg | **20.0** | **0.0** | 40.0 | −2.5 | car 10.0 | −10.0 | −3.3 |") != std::string::npos);
    const std::string per_class = critical_per_class_markdown(kClasses, 2, {"a", "b"}, {{0.1, 0.2, 0.3, 0.4}, {0.5, 0.6, 0.7, 0.8}});
    CHECK(per_class.find("| **cat** (critical) | **30.0** | **70.0** |") != std::string::npos);
    CHECK(per_class.find("| dog | 40.0 | 80.0 |") != std::string::npos);
    const std::string html = critical_html(t, kClasses);
    CHECK(html.find("class=\"num critical\"") != std::string::npos);
    const nlohmann::json j = critical_json(t, kClasses);
    CHECK(j.at("critical_class") == "cat");
    CHECK(j.at("baseline") == "pgd_at");
    CHECK(j.at("rows")[0].at("others_mean_delta").get<double>() == Approx(-0.05));

    CHECK_THROWS_WITH(critical_table("clean", hand_arms(), "natural", 2), Catch::Matchers::Contains("natural"));
    CHECK_THROWS(critical_table("clean", hand_arms(), "pgd_at", 4));
}

TEST_CASE("benz_longtail: --critical-class by name or index, --critical-weights, --arms", "[benz_longtail]") {
    const std::vector<std::string> cifar = {"airplane", "automobile", "bird", "cat", "deer",
                                            "dog",      "frog",       "horse", "ship", "truck"};
    CHECK(resolve_critical_class("", cifar) == 3);       // the paper's example
    CHECK(resolve_critical_class("Dog", cifar) == 5);
    CHECK(resolve_critical_class("7", cifar) == 7);
    CHECK_THROWS_WITH(resolve_critical_class("10", cifar),
                      Catch::Matchers::Contains("--critical-class") && Catch::Matchers::Contains("out of range"));
    CHECK_THROWS_WITH(resolve_critical_class("zebra", cifar),
                      Catch::Matchers::Contains("--critical-class") && Catch::Matchers::Contains("zebra"));
    CHECK_THROWS_WITH(resolve_critical_class("", {"T-shirt/top", "Trouser"}), Catch::Matchers::Contains("--critical-class"));
    CHECK(parse_critical_weights("--critical-weights", "2,5") == std::vector<float>{2.f, 5.f});
    CHECK_THROWS_WITH(parse_critical_weights("--critical-weights", "0"), Catch::Matchers::Contains("--critical-weights"));
    CHECK_THROWS_WITH(parse_critical_weights("--critical-weights", "2,2"), Catch::Matchers::Contains("twice"));
    CHECK_THROWS_WITH(parse_critical_weights("--critical-weights", "2x"), Catch::Matchers::Contains("2x"));

    cw::train::JobConfig base;
    const auto all = longtail_arms(base, 3, {2.f, 5.f});
    std::vector<std::string> names;
    for (const auto& a : all) names.push_back(a.name);
    CHECK(names == std::vector<std::string>{"pgd_at", "cs_equal", "cs_critical_w2", "cs_critical_w5", "class_balanced",
                                            "ldam_drw", "cosine_reg", "target_critical"});
    // Only scenario 2 and the targeted arm get the critical class: at_cost_sensitive with one is scenario 2.
    for (const auto& a : all) {
        INFO(a.name);
        const bool critical = a.name.rfind("cs_critical", 0) == 0 || a.name == "target_critical";
        CHECK(a.job.method_options.longtail.critical_class == (critical ? 3 : -1));
    }
    CHECK(all[3].job.method_options.longtail.critical_weight == 5.f);
    CHECK(all[1].job.method == "at_cost_sensitive");
    const auto picked = select_longtail_arms("--arms", all, "target_critical,pgd_at");
    REQUIRE(picked.size() == 2);
    CHECK(picked[0].name == "pgd_at");   // the table's order
    CHECK_THROWS_WITH(select_longtail_arms("--arms", all, "cs_equal"),
                      Catch::Matchers::Contains("--arms") && Catch::Matchers::Contains("pgd_at"));
    CHECK_THROWS_WITH(select_longtail_arms("--arms", all, "pgd_at,bogus"), Catch::Matchers::Contains("bogus"));
}

TEST_CASE("benz_longtail: three arms on the synthetic set, the critical-class table, --resume", "[benz_longtail]") {
    const fs::path out = fresh_dir("cw_benz_longtail_test");
    const Output o = run_experiment("benz_longtail", std::string(kTiny) + " --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    CHECK(o.text.find("critical class: brown square (index 3)") != std::string::npos);
    std::vector<std::vector<double>> robust;
    for (const std::string arm : {"pgd_at", "cs_critical_w2", "target_critical"}) {
        INFO(arm);
        const nlohmann::json r = contract_results(out / arm / "eval_last" / "results.json");
        robust.push_back(cw::report::per_class_values(*cw::report::find_evaluation(r, "pgd20"), "per_class_accuracy"));
    }
    CHECK(contract_results(out / "cs_critical_w2/eval_last/results.json").at("method") == "at_cost_sensitive");
    CHECK(contract_results(out / "target_critical/eval_last/results.json").at("method") == "at_target_class");
    // longtail_table.json: the critical class's robust numbers are the results' numbers.
    const nlohmann::json j = nlohmann::json::parse(read_text(out / "longtail_table.json"));
    const nlohmann::json& rows = j.at("robust").at("rows");
    CHECK(j.at("robust").at("critical_class") == "brown square");
    REQUIRE(rows.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        CHECK(rows[i].at("critical").get<double>() == Approx(robust[i][3]));
        CHECK(rows[i].at("critical_delta").get<double>() == Approx(robust[i][3] - robust[0][3]));
    }
    const std::string md = read_text(out / "longtail_table.md");
    CHECK(md.find("**brown square** (critical)") != std::string::npos);
    CHECK(read_text(out / "summary.md").find("[longtail_table.md](longtail_table.md)") != std::string::npos);
    CHECK(read_text(out / "longtail.html").find("critical") != std::string::npos);

    const Output again = run_experiment("benz_longtail", std::string(kTiny) + " --resume --out " + out.string());
    INFO(again.text);
    REQUIRE(again.code == 0);
    CHECK(again.text.find("target_critical finished before; skipped") != std::string::npos);
    CHECK(again.text.find("epoch 1/") == std::string::npos);
    CHECK(read_text(out / "longtail_table.md") == md);
    fs::remove_all(out);
}

TEST_CASE("benz_longtail: a bad --critical-class, --critical-weights or --arms is one line naming the flag",
          "[benz_longtail]") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--dataset synthetic", "--critical-class"},   // no "cat" there: the flag is required
        {"--critical-class zebra", "--critical-class"},
        {"--critical-class 10", "--critical-class"},
        {"--critical-weights 0", "--critical-weights"},
        {"--arms cs_equal", "--arms"},
        {"--arms pgd_at,bogus", "--arms"}};
    const fs::path out = fresh_dir("cw_bl_bad");
    for (const auto& [args, flag] : cases) {
        INFO(args);
        const Output o = run_experiment("benz_longtail", "--device cpu --out " + out.string() + " " + args, "2>&1 >/dev/null");
        CHECK(o.code != 0);
        CHECK(line_count(o.text) == 1);
        CHECK(o.text.find(flag) != std::string::npos);
    }
    CHECK(!fs::exists(out / "pgd_at" / "history.csv"));
    fs::remove_all(out);
}

TEST_CASE("benz_longtail: --help lists the common, job and remedy flags; the paper's setting", "[benz_longtail]") {
    const Output o = run_experiment("benz_longtail", "--help");
    REQUIRE(o.code == 0);
    for (const std::string& flag : expected_help_flags())
        if (flag != "--methods") CHECK(o.text.find(flag) != std::string::npos);
    for (const char* flag : {"--arms", "--critical-class", "--critical-weights", "--cs-power", "--cb-beta",
                             "--ldam-max-margin", "--drw-epoch", "--cos-lambda", "--target-prob"})
        CHECK(o.text.find(flag) != std::string::npos);
    CHECK(o.text.find("--critical-weight ") == std::string::npos);   // replaced by --critical-weights
    const Output c = run_experiment("benz_longtail", "--print-config");
    REQUIRE(c.code == 0);
    CHECK(c.text.find("arch=\"resnet18\"") != std::string::npos);
    CHECK(c.text.find("eps=\"8/255\"") != std::string::npos);
}
