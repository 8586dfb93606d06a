// The report's small parts on hand-made inputs: CSV reading, escaping (HTML, gnuplot, shell), base64, the
// worst-10% mean on 100 classes, CFP summing to 1, boundary error = clean − robust, and results.json checking
// (a missing or malformed file is one line naming it).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli/common_flags.h"
#include "eval/results_json.h"
#include "eval/class_metrics.h"
#include "util/csv.h"
#include "report/gnuplot.h"
#include "report/html.h"
#include "report/run_data.h"
#include "test_nn_util.h"

using namespace cw;
using namespace cw::report;

TEST_CASE("report CSV: quoted class names, blank lines, a short row is an error naming the file", "[report]") {
    const util::CsvTable t = util::parse_csv("epoch,eval,overall,\"a, b\",\"say \"\"hi\"\"\"\n1,test_clean,0.5,0.25,\n\n", "h.csv");
    REQUIRE(t.header == std::vector<std::string>{"epoch", "eval", "overall", "a, b", "say \"hi\""});
    REQUIRE(t.rows.size() == 1);
    REQUIRE(t.rows[0][3] == "0.25");
    REQUIRE(t.rows[0][4].empty());
    REQUIRE(std::isnan(util::csv_number(t.rows[0][4], "h.csv")));
    REQUIRE(util::csv_number("0.125", "h.csv") == 0.125);
    REQUIRE(t.column("overall") == 2);
    REQUIRE(t.column("nope") == -1);
    REQUIRE_THROWS_WITH(util::parse_csv("a,b\n1\n", "h.csv"), "h.csv: line 2 has 1 fields, the header 2");
    REQUIRE_THROWS_WITH(util::parse_csv("a,b\n\"1,2\n", "h.csv"), Catch::Contains("h.csv: a quoted field is not closed"));
    REQUIRE_THROWS_WITH(util::csv_number("0.5x", "h.csv"), "h.csv: '0.5x' is not a number");
}

TEST_CASE("report escaping: HTML entities, gnuplot strings and labels, shell command lines, base64", "[report]") {
    REQUIRE(html_escape("<b>\"A&B\"</b> it's") == "&lt;b&gt;&quot;A&amp;B&quot;&lt;/b&gt; it&#39;s");
    REQUIRE(gp_string("it's") == "'it''s'");
    REQUIRE(gp_data_label("say \"hi\"") == "\"say 'hi'\"");
    const char* argv[] = {"./train", "--out", "runs/a b", "--note", "it's", "--lr=0.1"};
    REQUIRE(cli::shell_command_line(6, argv) == "./train --out 'runs/a b' --note 'it'\\''s' --lr=0.1");
    // RFC 4648 test vectors
    REQUIRE(base64("") == "");
    REQUIRE(base64("f") == "Zg==");
    REQUIRE(base64("fo") == "Zm8=");
    REQUIRE(base64("foo") == "Zm9v");
    REQUIRE(base64("foobar") == "Zm9vYmFy");
    REQUIRE(base64(std::string("\xff\x00\x10", 3)) == "/wAQ");
}

TEST_CASE("class metrics at scale: worst-10% of 100 classes, CFP sums to 1, boundary error", "[report]") {
    // 100 classes of 10 samples; class k gets min(10, 7k mod 11) of them right clean and half that (rounded down)
    // under the attack, so every per-class accuracy, and the ten lowest, are known.
    const int C = 100, per = 10;
    std::vector<int32_t> y, clean, adv;
    std::vector<double> acc(C);
    for (int k = 0; k < C; ++k) {
        const int right = std::min(10, (k * 7) % 11);   // 0..10 correct out of 10
        acc[k] = right / 10.0;
        for (int i = 0; i < per; ++i) {
            y.push_back(k);
            clean.push_back(i < right ? k : (k + 1 + i) % C);
            adv.push_back(i < right / 2 ? k : (k + 3) % C);
        }
    }
    const auto m = fairness::class_metrics(y, clean, C);
    std::vector<double> sorted = acc;
    std::sort(sorted.begin(), sorted.end());
    double lowest10 = 0;
    for (int i = 0; i < 10; ++i) lowest10 += sorted[i];
    REQUIRE(m.worst10_accuracy == Approx(lowest10 / 10));
    double cfp_sum = 0;
    for (double c : m.cfp) cfp_sum += c;
    REQUIRE(cfp_sum == Approx(1.0));
    const auto r = fairness::class_metrics(y, adv, C);
    const auto bdy = fairness::boundary_error(m, r);
    for (int k = 0; k < C; ++k) {
        REQUIRE(m.per_class_accuracy[k] == Approx(acc[k]));
        REQUIRE(bdy[k] == Approx(acc[k] - (static_cast<int>(acc[k] * 10 + 0.5) / 2) / 10.0).margin(1e-12));
    }
    // FAIR-TAT eq. 7 literal one-vs-rest accuracy of class 0: (TP + TN) / N, counted by hand.
    int64_t tp = 0, tn = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        tp += y[i] == 0 && clean[i] == 0;
        tn += y[i] != 0 && clean[i] != 0;
    }
    REQUIRE(m.one_vs_rest_accuracy[0] == Approx(double(tp + tn) / double(y.size())));
}

namespace {
nlohmann::json small_results() {
    eval::RunInfo info;
    info.classes = {"cat", "dog"};
    eval::EvalRecords r;
    r.index = {0, 1, 2, 3};
    r.label = {0, 0, 1, 1};
    r.clean_pred = {0, 1, 1, 1};
    return eval::results_json(info, r, {});
}
std::string one_line_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}
}  // namespace

TEST_CASE("report input: a missing, truncated or contract-breaking results.json is one line naming the file", "[report]") {
    cw_nn_test::ScratchDir dir;
    const std::string file = (dir.path / "results.json").string();
    std::string e = one_line_error([&] { load_results_json(file); });
    REQUIRE(e == file + ": no such file (expected a results.json)");

    const std::string good = small_results().dump();
    std::ofstream(file) << good.substr(0, good.size() / 2);
    e = one_line_error([&] { load_results_json(file); });
    REQUIRE(e.rfind(file + ": malformed JSON", 0) == 0);
    REQUIRE(e.find('\n') == std::string::npos);

    auto broken = [&](const std::function<void(nlohmann::json&)>& edit) {
        nlohmann::json j = small_results();
        edit(j);
        std::ofstream(file, std::ios::trunc) << j.dump();
        return one_line_error([&] { load_results_json(file); });
    };
    REQUIRE(broken([](nlohmann::json&) {}) == "(no error)");
    REQUIRE(broken([](nlohmann::json& j) { j.erase("classes"); }) ==
            file + ": not a valid classwise results.json: no field 'classes'");
    REQUIRE(broken([](nlohmann::json& j) { j["schema"] = "other/2"; }) ==
            file + ": not a valid classwise results.json: schema is not \"classwise.results/1\"");
    REQUIRE(broken([](nlohmann::json& j) { j["evaluations"][0]["per_class_accuracy"] = {0.5}; }) ==
            file + ": not a valid classwise results.json: evaluations[0].per_class_accuracy should list one number "
                   "per class (2)");
    REQUIRE(broken([](nlohmann::json& j) { j["evaluations"][0]["confusion"][1] = {1, -1}; }) ==
            file + ": not a valid classwise results.json: evaluations[0].confusion holds a value that is not a count");
    REQUIRE(broken([](nlohmann::json& j) { j["evaluations"][0].erase("cfp"); }) ==
            file + ": not a valid classwise results.json: evaluations[0] has no field 'cfp'");

    // A run folder: an unfinished evaluation is a note, a folder with nothing of a run is an error naming it.
    std::filesystem::create_directories(dir.path / "run" / "eval_last");
    e = one_line_error([&] { load_run((dir.path / "run").string()); });
    REQUIRE(e == (dir.path / "run").string() + ": not a classwise run (no results.json, eval_*/results.json, "
                                               "history.csv or steps.csv in it)");
    std::ofstream((dir.path / "run" / "eval_best_robust.json").string()) << "{}";
    std::filesystem::create_directories(dir.path / "run" / "eval_best_robust");
    std::ofstream((dir.path / "run" / "eval_best_robust" / "results.json").string()) << small_results().dump();
    const RunData run = load_run((dir.path / "run").string());
    REQUIRE(run.evaluations.size() == 1);
    REQUIRE(run.evaluations[0].checkpoint == "best_robust");
    REQUIRE(run.notes.size() == 1);
    REQUIRE(run.notes[0].find("'last' has not finished") != std::string::npos);
    REQUIRE(one_line_error([&] { load_run((dir.path / "nothing").string()); }) ==
            (dir.path / "nothing").string() + ": no such file or folder (expected a run folder or a results.json)");
}
