// Report pages rendered for real (gnuplot is installed by scripts/setup_debian.sh, so these never skip): a fixture
// run (tests/fixtures/report_run, a short quickstart run) gives well-formed SVG (checked by libxml2's xmllint) with
// one bar per class, a page that references every figure and escapes class names; a comparison of two runs shows
// Spearman's rho between them; a run with no gnuplot still gets its page, with tables only.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "util/atomic_file.h"
#include "eval/results_json.h"
#include "report/compare_page.h"
#include "report/figure_bars.h"
#include "report/gnuplot.h"
#include "report/run_page.h"
#include "report/subprocess.h"
#include "test_nn_util.h"
#include "tests/test_process.h"

using namespace cw;
using namespace cw::report;
namespace fs = std::filesystem;

namespace {
const std::string kOddName = "<i>\"Shirt\" & co</i>";

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
    return n;
}

// Bars per plotted series of a gnuplot SVG: the filled polygons inside each <g id="gnuplot_plot_N"> group, less
// the one in the key.
std::vector<size_t> bars_per_series(const std::string& svg) {
    std::vector<size_t> out;
    const std::string tag = "<g id=\"gnuplot_plot_";
    for (size_t p = svg.find(tag); p != std::string::npos;) {
        const size_t next = svg.find(tag, p + tag.size());
        const size_t n = count(svg.substr(p, next == std::string::npos ? std::string::npos : next - p), "<polygon");
        out.push_back(n == 0 ? 0 : n - 1);
        p = next;
    }
    return out;
}

// The fixture run copied, with class 6 renamed to a name full of HTML metacharacters.
fs::path fixture_copy(const fs::path& scratch) {
    const std::string fixture = cw_nn_test::fixture_path("report_run");
    if (fixture.empty()) FAIL("tests/fixtures/report_run missing");
    const fs::path run = scratch / "run";
    fs::copy(fixture, run, fs::copy_options::recursive);
    nlohmann::json r = nlohmann::json::parse(util::read_file_text((run / "eval_last/results.json").string()));
    const std::string old = r["classes"][6];
    r["classes"][6] = kOddName;
    util::write_file_atomic((run / "eval_last/results.json").string(), r.dump());
    std::string history = util::read_file_text((run / "history.csv").string());
    const size_t at = history.find("," + old + ",");
    REQUIRE(at != std::string::npos);
    history.replace(at, old.size() + 2, ",\"<i>\"\"Shirt\"\" & co</i>\",");
    util::write_file_atomic((run / "history.csv").string(), history);
    return run;
}
}  // namespace

TEST_CASE("report page of a fixture run: well-formed SVGs, one bar per class, every figure on the page, names escaped",
          "[report]") {
    REQUIRE(program_in_path("xmllint"));   // libxml2-utils, installed by scripts/setup_debian.sh
    cw_nn_test::ScratchDir scratch;
    const fs::path run = fixture_copy(scratch.path);
    const RunData data = load_run(run.string());
    REQUIRE(data.classes.size() == 10);
    REQUIRE(data.classes[6] == kOddName);
    const fs::path out = scratch.path / "page";
    const std::string page_file = write_run_page(data, out.string());
    const std::string page = util::read_file_text(page_file);

    std::vector<std::string> svgs;
    for (const auto& f : fs::directory_iterator(out / "figures"))
        if (f.path().extension() == ".svg") svgs.push_back(f.path().stem().string());
    std::sort(svgs.begin(), svgs.end());
    // What the fixture holds must all be drawn: bars, centred bars, CFP, confusion per evaluation, cosine maps (the
    // evaluator's mean logits), per-class curves per history evaluation, the step audit.
    for (const char* name : {"last_class_accuracy", "last_class_accuracy_centred", "last_class_cfp",
                             "last_confusion_clean", "last_confusion_pgd20", "last_cosine_clean", "last_cosine_pgd20",
                             "history_test_clean", "history_test_pgd10", "history_train_loss", "steps_loss_share",
                             "steps_cosine"})
        REQUIRE(std::find(svgs.begin(), svgs.end(), name) != svgs.end());

    for (const std::string& name : svgs) {
        INFO(name);
        const std::string svg_file = (out / "figures" / (name + ".svg")).string();
        const ProcessResult lint = run_program({"xmllint", "--noout", svg_file});
        INFO(lint.stderr_text);
        REQUIRE(lint.exit_code == 0);
        REQUIRE(fs::exists(out / "figures" / (name + ".png")));
        REQUIRE(fs::file_size(out / "figures" / (name + ".png")) > 1000);
        // the page shows it inline and links the files
        REQUIRE(count(page, "id=\"fig-" + name + "\"") == 1);
        REQUIRE(count(page, "figures/" + name + ".svg") == 1);
        REQUIRE(count(page, "figures/" + name + ".png") == 1);
        if (name.find("class_accuracy") != std::string::npos || name.find("class_cfp") != std::string::npos) {
            const std::vector<size_t> bars = bars_per_series(util::read_file_text(svg_file));
            REQUIRE(bars.size() == 3);   // clean, fgsm, pgd20
            for (size_t b : bars) REQUIRE(b == 10);
        }
    }
    REQUIRE(count(page, "data:image/svg+xml;base64,") == svgs.size());
    // The odd class name appears escaped, never raw.
    REQUIRE(page.find("&lt;i&gt;&quot;Shirt&quot; &amp; co&lt;/i&gt;") != std::string::npos);
    REQUIRE(page.find(kOddName) == std::string::npos);
    REQUIRE(page.find("<i>") == std::string::npos);
    // the run's configuration: command line, seed, device, durations
    REQUIRE(page.find("Command line:") != std::string::npos);
    REQUIRE(page.find("training time") != std::string::npos);
    REQUIRE(page.find(">seed<") != std::string::npos);
}

TEST_CASE("report page of a run with only its training history", "[report]") {
    cw_nn_test::ScratchDir scratch;
    const fs::path run = fixture_copy(scratch.path);
    fs::remove_all(run / "eval_last");
    const RunData data = load_run(run.string());
    REQUIRE(data.evaluations.empty());
    REQUIRE(data.notes.size() == 1);
    const std::string page = util::read_file_text(write_run_page(data, (scratch.path / "page").string()));
    REQUIRE(page.find("no final evaluation yet") != std::string::npos);
    REQUIRE(page.find("id=\"fig-history_test_clean\"") != std::string::npos);
    REQUIRE(page.find("class_accuracy") == std::string::npos);
}

namespace {
// A results.json whose robust per-class accuracies rank the classes in `order` (order[k]: correct of 4).
void write_synthetic_run(const fs::path& dir, const std::vector<int>& robust_correct, const std::string& method,
                         bool superclasses = false) {
    eval::RunInfo info;
    info.classes = {"a", "b", "c", "d"};
    info.method = method;
    if (superclasses) {
        info.coarse_classes = {"ab", "cd"};
        info.coarse_of = {0, 0, 1, 1};
    }
    eval::EvalRecords r;
    r.attacks = {"pgd20"};
    r.adv_pred.resize(1);
    for (int k = 0; k < 4; ++k)
        for (int i = 0; i < 4; ++i) {
            r.index.push_back(r.size());
            r.label.push_back(k);
            r.clean_pred.push_back(k);
            r.adv_pred[0].push_back(i < robust_correct[k] ? k : (k + 1) % 4);
        }
    eval::AttackSummary s{"pgd20", {{"type", "pgd"}, {"eps", 8.0 / 255}, {"steps", 20}}, 1.0, 0, {}};
    util::write_file_atomic((dir / "results.json").string(), eval::results_json(info, r, {s}).dump());
}
}  // namespace

TEST_CASE("report comparison: methods as columns, Spearman between runs, mismatched classes refused", "[report]") {
    cw_nn_test::ScratchDir scratch;
    write_synthetic_run(scratch.path / "up", {1, 2, 3, 4}, "pgd_at");
    write_synthetic_run(scratch.path / "down", {4, 3, 2, 1}, "fair_tat");
    write_synthetic_run(scratch.path / "same", {0, 2, 3, 4}, "trades");
    std::vector<RunData> runs = {load_run((scratch.path / "up").string()), load_run((scratch.path / "down").string()),
                                 load_run((scratch.path / "same").string())};
    const std::string page = util::read_file_text(write_compare_page(runs, (scratch.path / "cmp").string()));
    for (const char* method : {"pgd_at", "fair_tat", "trades"}) REQUIRE(page.find(method) != std::string::npos);
    // Spearman table row of "up": 1.00 with itself, -1.00 with the reversed run, 1.00 with the same ranking.
    REQUIRE(page.find("<tr><td>up</td><td class=\"num\">1.00</td><td class=\"num\">-1.00</td><td class=\"num\">1.00</td></tr>") !=
            std::string::npos);
    // worst class under pgd20 of "up" is a (25%), of "down" d
    REQUIRE(page.find("25.0 (a)") != std::string::npos);
    REQUIRE(page.find("25.0 (d)") != std::string::npos);
    for (const char* fig : {"compare_robust", "compare_clean", "compare_spearman"}) {
        REQUIRE(page.find(std::string("id=\"fig-") + fig + "\"") != std::string::npos);
        const std::vector<size_t> bars =
            std::string(fig) == "compare_spearman"
                ? std::vector<size_t>{}
                : bars_per_series(util::read_file_text((scratch.path / "cmp/figures" / (std::string(fig) + ".svg")).string()));
        for (size_t b : bars) REQUIRE(b == 4);
    }

    // Other classes: refused, naming the file.
    nlohmann::json other = nlohmann::json::parse(util::read_file_text((scratch.path / "same/results.json").string()));
    other["classes"][0] = "z";
    util::write_file_atomic((scratch.path / "same/results.json").string(), other.dump());
    runs[2] = load_run((scratch.path / "same").string());
    REQUIRE_THROWS_WITH(write_compare_page(runs, (scratch.path / "cmp2").string()),
                        (scratch.path / "same/results.json").string() +
                            ": its classes differ from the first run's; only runs on the same classes can be compared");
    // The tool says only that: it printed "wrote " before the page failed.
    const auto tool = cw_test::run_shell("'" + (cw_test::repo_root() / "build/tools/report").string() + "' '" +
                                         (scratch.path / "up").string() + "' '" + (scratch.path / "same").string() +
                                         "' --out '" + (scratch.path / "cmp3").string() + "' 2>&1");
    CHECK(tool.code == 1);
    CHECK(tool.text == "report: " + (scratch.path / "same/results.json").string() +
                           ": its classes differ from the first run's; only runs on the same classes can be compared\n");
}

TEST_CASE("report page with superclasses (CIFAR-100's coarse labels): a superclass confusion heatmap", "[report]") {
    cw_nn_test::ScratchDir scratch;
    write_synthetic_run(scratch.path, {1, 2, 3, 4}, "pgd_at", true);
    const std::string page = util::read_file_text(write_run_page(load_run(scratch.path.string()), scratch.path.string()));
    for (const char* fig : {"superclass_confusion_clean", "superclass_confusion_pgd20"})
        REQUIRE(page.find(std::string("id=\"fig-") + fig + "\"") != std::string::npos);
    // Under pgd20 a wrong prediction is the next class: a's 3 (a->b) stay in "ab", b's 2 (b->c) cross to "cd",
    // c's 1 (c->d) stays: row ab = 6 ab + 2 cd of 8, row cd = 8 cd. Lines are "column row percent".
    const std::string dat = util::read_file_text((scratch.path / "figures/superclass_confusion_pgd20.dat").string());
    REQUIRE(dat == "0 0 75.0000\n1 0 25.0000\n\n0 1 0.0000\n1 1 100.0000\n\n");
}

TEST_CASE("the page written after a run survives a missing gnuplot: tables only, one warning", "[report]") {
    cw_nn_test::ScratchDir scratch;
    write_synthetic_run(scratch.path, {1, 2, 3, 4}, "pgd_at");
    const char* before = std::getenv("CLASSWISE_GNUPLOT");
    const std::string saved = before ? before : "";
    setenv("CLASSWISE_GNUPLOT", "/nonexistent/gnuplot", 1);
    std::ostringstream log;
    write_run_page_after_run(scratch.path.string(), log);
    if (before) setenv("CLASSWISE_GNUPLOT", saved.c_str(), 1);
    else unsetenv("CLASSWISE_GNUPLOT");
    REQUIRE(log.str().find("warning: gnuplot not found") != std::string::npos);
    const std::string page = util::read_file_text((scratch.path / "report.html").string());
    REQUIRE(page.find("Figures were not drawn") != std::string::npos);
    REQUIRE(page.find("<table>") != std::string::npos);
    REQUIRE(!fs::exists(scratch.path / "figures"));
}

// A page that cannot be written (here report.html is a folder) leaves the finished run alone with one warning line;
// the log said "wrote " in front of it while the page was still being made.
TEST_CASE("the page written after a run: a page that fails is one warning, not a 'wrote' line", "[report]") {
    cw_nn_test::ScratchDir scratch;
    write_synthetic_run(scratch.path, {1, 2, 3, 4}, "pgd_at");
    fs::create_directories(scratch.path / "report.html" / "in_the_way");
    std::ostringstream log;
    REQUIRE_NOTHROW(write_run_page_after_run(scratch.path.string(), log));
    const std::string text = log.str();
    INFO(text);
    CHECK(text.rfind("warning: no report page: ", 0) == 0);
    CHECK(text.find("wrote") == std::string::npos);
    CHECK(std::count(text.begin(), text.end(), '\n') == 1);
}

// A chart whose every value is 0 (a natural model's robust accuracy per class; remedies that changed no class against
// their baseline, as benz_longtail draws them) gave gnuplot the y range [0:0], which it refuses ("empty y range"), and
// the experiment that drew it failed after its study had finished.
TEST_CASE("a bar chart whose every value is 0 is drawn, centred or from the data", "[report]") {
    cw_nn_test::ScratchDir scratch;
    for (const bool centred : {true, false}) {
        BarChart chart{centred ? "flat_centred" : "flat", "every value 0", "change (points)", {"a", "b", "c"},
                       {{"first", {0, 0, 0}}, {"second", {0, 0, 0}}}, centred, 0, 0, false};
        RenderedFigure f;
        REQUIRE_NOTHROW(f = render(bar_figure(chart), scratch.path.string()));
        const std::string svg = util::read_file_text(f.svg_file);
        CHECK(svg.find("<svg") != std::string::npos);
        // The range the script sets is one unit, symmetric when centred.
        const std::string gp = util::read_file_text((scratch.path / (chart.name + ".gp")).string());
        CHECK(gp.find(centred ? "set yrange [-1.2500:1.2500]" : "set yrange [0:1.0000]") != std::string::npos);
    }
}
