// report/seed_table.h and the seed reports built on it (build/tools/seeds, scripts/fair_methods_report.sh).
// The small cases are computed by hand; the report is compared with the page the script wrote from the same runs
// when it still computed its tables with jq and awk (tests/fixtures/seed_report, tools/make_seed_report_fixture.py).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/seed_table.h"
#include "tests/test_process.h"

namespace fs = std::filesystem;
using namespace cw;
using nlohmann::json;

namespace {

report::SeedRuns runs_of(const std::vector<std::vector<double>>& clean, const std::vector<std::vector<double>>& adv) {
    report::SeedRuns r;
    r.classes = {"a", "b", "c", "d"};
    for (size_t i = 0; i < clean.size(); ++i) {
        json j;
        j["classes"] = r.classes;
        auto eval = [](const std::string& name, const std::vector<double>& acc) {
            double sum = 0;
            for (double a : acc) sum += a;
            return json{{"name", name}, {"accuracy", sum / static_cast<double>(acc.size())}, {"per_class_accuracy", acc}};
        };
        j["evaluations"] = {eval("clean", clean[i]), eval("pgd20", adv[i])};
        r.names.push_back("run" + std::to_string(i));
        r.results.push_back(j);
    }
    return r;
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("seed table: mean and sample std, lifts called real only past the seeds' spread", "[report][seeds]") {
    const auto m = report::mean_std({0.5, 0.7, 0.6});
    CHECK(m.mean == Approx(0.6));
    CHECK(m.std == Approx(0.1));
    CHECK(std::isnan(report::mean_std({0.3}).std));   // one value: no spread to estimate
    CHECK(report::lift({10, 12}, {4, 8}) == "+5.0 (real)");
    CHECK(report::lift({8, 10}, {4, 8}) == "+3.0 (within the seeds)");   // a tie at 8 is not past the spread
    CHECK(report::lift({3, 5}, {4, 5}) == "-0.5 (within the seeds)");
    CHECK(report::lift({0, 0, 0}, {0, 0, 0}) == "+0.0");
    CHECK(report::lift({1, 3}, {2, 2}) == "+0.0");
}

TEST_CASE("seed table: a summary row by hand", "[report][seeds]") {
    // Two seeds, four classes. Method: clean means 0.7 and 0.6, worst 0.4 and 0.2; PGD-20 sorted per seed
    // (0.1, 0.2, 0.3, 0.6) and (0, 0.2, 0.4, 0.6): worst 0.1 / 0, bottom 3 20% / 20%, spread 0.5 / 0.6.
    const auto method = runs_of({{0.8, 0.4, 0.9, 0.7}, {0.6, 0.2, 0.8, 0.8}}, {{0.3, 0.1, 0.6, 0.2}, {0.4, 0, 0.6, 0.2}});
    // Reference: clean worst 0.1 and 0.1; PGD-20 worst 0 and 0, bottom 3 (0+0.1+0.2)/3 = 10% and (0+0+0.3)/3 = 10%.
    const auto ref = runs_of({{0.1, 0.5, 0.5, 0.5}, {0.1, 0.5, 0.5, 0.5}}, {{0, 0.1, 0.2, 0.5}, {0, 0, 0.3, 0.5}});
    // clean 65.0 ± 7.1 (sqrt(0.005)); clean worst 30.0 ± 14.1; PGD-20 30.0 ± 0.0; worst 5.0 ± 7.1; bottom 3
    // 20.0 ± 0.0; spread 55.0 ± 7.1; lifts: worst +5.0 (0.1 > 0 but 0 = 0: within), bottom 3 +10.0 (20 > 10: real),
    // clean worst +20.0 (0.2 > 0.1: real).
    CHECK(report::summary_row(method, &ref, "pgd20") ==
          "65.0 ± 7.1 | 30.0 ± 14.1 | 30.0 ± 0.0 | 5.0 ± 7.1 | 20.0 ± 0.0 | 55.0 ± 7.1 | +5.0 (within the seeds) | "
          "+10.0 (real) | +20.0 (real)");
    CHECK(report::summary_row(ref, nullptr, "pgd20").rfind("40.0 ± 0.0 | 10.0 ± 0.0 |", 0) == 0);
    CHECK(report::summary_row(ref, nullptr, "pgd20").find("| — | — | —") != std::string::npos);
    CHECK_THROWS_WITH(report::summary_row(method, &ref, "pgd10"), Catch::Contains("run0: no evaluation 'pgd10'"));
}

// One run has no spread: its std is not 0 (which reads as "no seed noise"), and a difference from one run on either
// side is not called real.
TEST_CASE("seed table: one run shows no std and no verdict", "[report][seeds]") {
    const auto one = runs_of({{0.8, 0.4, 0.9, 0.7}}, {{0.3, 0.1, 0.6, 0.2}});
    json summary;
    const std::string table = report::seed_table(one, summary);
    // clean: overall 70.0, worst 40.0 (b), spread 50.0; class a 80.0
    CHECK(table.find("| clean | 70.0 ± – | 40.0 ± – | 50.0 ± – | 80.0 ± – |") != std::string::npos);
    CHECK(table.find("\n1 run; ") != std::string::npos);
    CHECK(summary["clean"]["overall"][1].is_null());
    CHECK(report::lift({10}, {4, 8}) == "+4.0 (one seed)");
    CHECK(report::lift({10, 12}, {4}) == "+7.0 (one seed)");
    CHECK(report::lift({4}, {4}) == "+0.0");
    CHECK(report::summary_row(one, nullptr, "pgd20").rfind("70.0 ± – | 40.0 ± – | 30.0 ± – | 10.0 ± – | 20.0 ± – |", 0) == 0);
}

TEST_CASE("seed report: scripts/fair_methods_report.sh writes the page its jq version wrote", "[report][seeds]") {
    const fs::path root = cw_test::repo_root(), fixture = root / "tests/fixtures/seed_report";
    REQUIRE(fs::exists(fixture / "fair/fashion-mnist/pgd_at/seed0/eval_last/results.json"));
    REQUIRE(fs::exists(root / "build/tools/seeds"));
    // The script writes each method's seeds.md beside its runs: work on a copy.
    const fs::path tmp = fs::temp_directory_path() / ("cw_seed_report_" + std::to_string(getpid()));
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    fs::copy(fixture / "fair", tmp / "fair", fs::copy_options::recursive);
    const auto r = cw_test::run_shell("cd '" + root.string() + "' && scripts/fair_methods_report.sh '" +
                                      (tmp / "fair").string() + "' '" + (tmp / "page.md").string() + "' 2>&1");
    INFO(r.text);
    REQUIRE(r.code == 0);
    const std::string got = read_text(tmp / "page.md"), want = read_text(fixture / "expected_fair_methods.md");
    CHECK(got == want);
    // The cases the fixture was built with are on the page.
    CHECK(got.find("| frl | last | 79.2 ± 2.6 | 61.7 ± 2.9 |") != std::string::npos);
    CHECK(got.find("+41.7 (real)") != std::string::npos);
    CHECK(got.find("| cfa | ema_last (2 seeds) |") != std::string::npos);
    CHECK(got.find("best_robust epochs (seeds 0, 1, 2): 1,?,3") != std::string::npos);
    fs::remove_all(tmp);
}

// A training run's folder holds one evaluation per checkpoint (eval_last/, eval_best_robust/, ...), not a
// results.json: the message says so and names one to give, where it said only that results.json could not be opened.
TEST_CASE("seed table: a training run's folder is named as such, with an evaluation to give instead", "[report][seeds]") {
    const fs::path run = fs::temp_directory_path() / ("cw_seed_run_" + std::to_string(::getpid()));
    fs::remove_all(run);
    fs::create_directories(run / "eval_last");
    std::ofstream(run / "eval_last" / "results.json") << "{}\n";
    std::string message;
    try {
        report::load_seed_runs({run.string()});
    } catch (const std::exception& e) {
        message = e.what();
    }
    CHECK(message == run.string() + ": a training run's folder; give one of its evaluations, e.g. " +
                         (run / "eval_last").string());
    fs::remove_all(run);
}

// A results.json that breaks the contract stops `seeds` with one line naming the file and the field. Seen failing
// before seed_table read results through the contract's checker: a run without per-class accuracies aborted the tool
// (an assertion inside the JSON library), and a class without test samples (null accuracy) ended it with the JSON
// library's type error.
TEST_CASE("seed table: a results.json that breaks the contract is named in one line", "[report][seeds]") {
    const fs::path dir = fs::temp_directory_path() / ("cw_seed_bad_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path good = fs::path(cw_test::repo_root()) / "tests/fixtures/seed_report/fair/gtsrb32/pgd_at/seed0/eval_last";
    json j = json::parse(read_text(good / "results.json"));
    j["evaluations"][1].erase("per_class_accuracy");
    std::ofstream(dir / "results.json") << j.dump();
    auto seeds = [&] {
        return cw_test::run_shell("'" + (cw_test::repo_root() / "build/tools/seeds").string() + "' '" + good.string() +
                                  "' '" + dir.string() + "' 2>&1");
    };
    auto r = seeds();
    INFO(r.text);
    CHECK(r.code == 1);
    CHECK(r.text == "seeds: " + (dir / "results.json").string() +
                        ": not a valid classwise results.json: evaluations[1] has no field 'per_class_accuracy'\n");
    // A class without samples has a null accuracy (docs/results_json.md): it has no mean, and it is neither the run's
    // worst class nor part of its spread. PGD-20 per class (stop, yield, 30 km/h): the fixture run 55, 50, 15; this
    // run none, 50, 10. Worst: 15 and 10, mean 12.5, sd 3.5; spread: 40 and 40. Seen failing with the null class
    // counted (its NaN taken as the minimum).
    j["evaluations"][1]["per_class_accuracy"] = {nullptr, 0.5, 0.1};
    std::ofstream(dir / "results.json") << j.dump();
    r = seeds();
    INFO(r.text);
    CHECK(r.code == 0);
    CHECK(r.text.find("| pgd20 | 40.0 ± 0.0 | 12.5 ± 3.5 | 40.0 ± 0.0 | – ± – | 50.0 ± 0.0 | 12.5 ± 3.5 |") !=
          std::string::npos);
    fs::remove_all(dir);
}
