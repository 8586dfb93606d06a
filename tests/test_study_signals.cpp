// A study stopped by a signal in each of its phases (study/study.h): the probe that times the CPU estimate, an
// arm's training, an arm's final evaluation, the summary. Each is a real process (an experiment binary on the
// synthetic set) signalled from outside when its output reaches the phase; each must exit 130 / 143 with what it
// had saved, and --resume must then finish with the numbers of an uninterrupted run. Also: without a terminal and
// without --yes, a run whose CPU estimate is over --ask-above trains nothing and exits 2.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>

#include "util/atomic_file.h"
#include "report/gnuplot.h"
#include "tests/skip.h"
#include "tests/test_experiments_util.h"
#include "tests/test_process.h"

namespace fs = std::filesystem;
using cw_experiments_test::fresh_dir;
using cw_experiments_test::read_text;
using cw_test::Spawned;

namespace {

// The flags every run here shares (a flag may be given once: each test adds its own --epochs, --arch ...).
const std::string kTiny =
    " --dataset synthetic --train-n 200 --eval-n 100 --epoch-eval-n 50 --attack-steps 2 --eval-steps 2"
    " --final-attacks pgd20 --final-checkpoints last --optimizer adam --lr 0.002 --methods natural,pgd_at --device cpu";
const std::string kLenet = " --arch lenet5 --batch-size 50";

std::string quickstart(const std::string& args, bool figures = false) {
    return std::string(figures ? "env CLASSWISE_THREADS=1 " : "env CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent ") +
           (cw_test::repo_root() / "experiments" / "quickstart").string() + " " + args;
}

// The per-class numbers of an arm's final evaluation (results.json without its run-specific header fields).
std::string per_class(const fs::path& results) {
    nlohmann::json e = nlohmann::json::parse(read_text(results)).at("evaluations");
    for (auto& x : e) x.erase("time_s");   // the wall time; everything else bit for bit (one thread)
    return e.dump();
}

// The probe's scratch folders (<out>/.estimate.<pid>) are gone.
bool no_probe_left(const fs::path& dir) {
    if (!fs::exists(dir)) return true;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind(".estimate", 0) == 0) return false;
    return true;
}

// Runs the study uninterrupted into `dir` (the reference of the resumed runs).
void reference_run(const fs::path& dir, const std::string& extra) {
    Spawned p(quickstart(kTiny + kLenet + extra + " --out " + dir.string()));
    const int code = p.finish();
    INFO(p.text);
    REQUIRE(code == 0);
}

void same_as(const fs::path& run, const fs::path& reference) {
    for (const char* arm : {"natural", "pgd_at"})
        CHECK(per_class(run / arm / "eval_last/results.json") == per_class(reference / arm / "eval_last/results.json"));
    const auto table = [](const std::string& md) { return md.substr(0, md.find("\nWall time")); };
    CHECK(table(read_text(run / "summary.md")) == table(read_text(reference / "summary.md")));
}

}  // namespace

TEST_CASE("study signals: no terminal and no --yes over --ask-above: nothing trains, exit 2", "[study][signals]") {
    const fs::path dir = fresh_dir("cw_study_noask");
    Spawned p(quickstart(kTiny + kLenet + " --epochs 100000 --out " + dir.string()));   // stdin is /dev/null
    const int code = p.finish();
    INFO(p.text);
    REQUIRE(code == 2);
    CHECK(p.text.find("estimate: one pgd_at step takes") != std::string::npos);
    CHECK(p.text.find("  --quick ") != std::string::npos);
    CHECK(p.text.find("  a GPU ") != std::string::npos);
    CHECK(p.text.find("  --yes ") != std::string::npos);
    CHECK(!fs::exists(dir / "natural"));
    CHECK(no_probe_left(dir));
    // --yes trains (a short run, with the threshold at 0 so that it is over it too).
    Spawned y(quickstart(kTiny + kLenet + " --epochs 1 --ask-above 0 --yes --out " + dir.string()));
    const int ycode = y.finish();
    INFO(y.text);
    REQUIRE(ycode == 0);
    CHECK(y.text.find("--yes: training on this CPU") != std::string::npos);
    CHECK(fs::exists(dir / "pgd_at" / "eval_last" / "results.json"));
    fs::remove_all(dir);
}

TEST_CASE("study signals: SIGTERM during the probe stops the study before any arm, exit 143", "[study][signals]") {
    const fs::path dir = fresh_dir("cw_study_probe");
    // A bigger model so that the probe's three steps take seconds, far longer than the signal takes to arrive; a
    // small batch so that the step in progress when it lands ends soon (the trainer stops between steps).
    Spawned p(quickstart(kTiny + " --arch preact_resnet18 --batch-size 10 --epochs 3 --out " + dir.string()));
    REQUIRE(p.wait_for("estimate: timing a few training steps", 120));
    kill(p.pid, SIGTERM);
    const int code = p.finish();
    INFO(p.text);
    REQUIRE(code == 143);
    CHECK(p.text.find("stopped by a signal during the estimate; nothing has started") != std::string::npos);
    CHECK(p.text.find("== run 1/2") == std::string::npos);
    CHECK(!fs::exists(dir / "natural"));
    CHECK(no_probe_left(dir));
    fs::remove_all(dir);
}

TEST_CASE("study signals: SIGTERM in training and SIGINT in the final evaluation save and resume bit for bit",
          "[study][signals]") {
    const fs::path ref = fresh_dir("cw_study_sig_ref"), dir = fresh_dir("cw_study_sig");
    const std::string extra = " --epochs 12 --eval-batch-size 5";
    reference_run(ref, extra);

    {   // training: the first arm is at its third epoch
        Spawned p(quickstart(kTiny + kLenet + extra + " --out " + dir.string()));
        REQUIRE(p.wait_for("epoch 3/12", 120));
        kill(p.pid, SIGTERM);
        const int code = p.finish();
        INFO(p.text);
        REQUIRE(code == 143);
        CHECK(fs::exists(dir / "natural" / "state.safetensors"));
        CHECK(!fs::exists(dir / "natural" / "eval_last"));
        CHECK(!fs::exists(dir / "pgd_at"));
    }
    {   // the second arm's final evaluation (20 batches of 5, each step saved)
        Spawned p(quickstart(kTiny + kLenet + extra + " --resume --out " + dir.string()));
        REQUIRE(p.wait_for("pgd_at (pgd_at) into", 300));
        REQUIRE(p.wait_for("final evaluation of last", 300, p.text.find("pgd_at (pgd_at) into")));
        kill(p.pid, SIGINT);
        const int code = p.finish();
        INFO(p.text);
        REQUIRE(code == 130);
        CHECK(p.text.find("evaluation stopped by a signal") != std::string::npos);
        CHECK(fs::exists(dir / "natural" / "eval_last" / "results.json"));
        CHECK(fs::exists(dir / "pgd_at" / "eval_last" / "eval_state.json"));
        CHECK(!fs::exists(dir / "pgd_at" / "eval_last" / "results.json"));
        CHECK(!fs::exists(dir / "summary.md"));
    }
    Spawned p(quickstart(kTiny + kLenet + extra + " --resume --out " + dir.string()));
    const int code = p.finish();
    INFO(p.text);
    REQUIRE(code == 0);
    CHECK(p.text.find("resuming from") != std::string::npos);   // the evaluation continued from its records
    same_as(dir, ref);
    fs::remove_all(dir);
    fs::remove_all(ref);
}

TEST_CASE("study signals: SIGTERM during the summary's figures stops with 143; --resume writes it again",
          "[study][signals]") {
    const fs::path dir = fresh_dir("cw_study_summary");
    reference_run(dir, " --epochs 1");
    if (!cw::report::gnuplot_available()) CW_SKIP("no gnuplot: the summary has no slow part to signal");
    Spawned p(quickstart(kTiny + kLenet + " --epochs 1 --resume --out " + dir.string(), /*figures=*/true));
    REQUIRE(p.wait_for("(last checkpoint):", 120));
    kill(p.pid, SIGTERM);
    const int code = p.finish();
    INFO(p.text);
    REQUIRE(code == 143);
    CHECK(p.text.find("stopped by SIGTERM") != std::string::npos);
    Spawned again(quickstart(kTiny + kLenet + " --epochs 1 --resume --out " + dir.string()));
    REQUIRE(again.finish() == 0);
    CHECK(fs::exists(dir / "summary.md"));
    fs::remove_all(dir);
}

TEST_CASE("study signals: a --job killed by SIGKILL in its final evaluation continues from the per-sample records",
          "[study][signals][cluster]") {
    const fs::path ref = fresh_dir("cw_study_kill_ref"), dir = fresh_dir("cw_study_kill");
    const std::string extra = " --epochs 3 --eval-batch-size 5 --seeds 0";
    reference_run(ref, extra);

    {   // the job's final evaluation (20 batches of 5, each saved): killed without a chance to save anything more
        Spawned p(quickstart(kTiny + kLenet + extra + " --job pgd_at/seed0 --out " + dir.string()));
        REQUIRE(p.wait_for("final evaluation of last", 300));
        REQUIRE(p.wait_for("batch 3/", 300, p.text.find("final evaluation of last")));
        kill(p.pid, SIGKILL);
        REQUIRE(p.finish() == 128 + SIGKILL);
        CHECK(fs::exists(dir / "pgd_at/seed0/eval_last/eval_state.json"));
        CHECK(!fs::exists(dir / "pgd_at/seed0/eval_last/results.json"));
    }
    Spawned p(quickstart(kTiny + kLenet + extra + " --job pgd_at/seed0 --out " + dir.string()));
    const int code = p.finish();
    INFO(p.text);
    REQUIRE(code == 0);
    CHECK(p.text.find("resuming from") != std::string::npos);   // the records, not a fresh evaluation
    CHECK(p.text.find("epoch 1/3") == std::string::npos);       // nor a fresh training
    CHECK(per_class(dir / "pgd_at/seed0/eval_last/results.json") == per_class(ref / "pgd_at/seed0/eval_last/results.json"));
    fs::remove_all(dir);
    fs::remove_all(ref);
}
