// Jobs that are not training runs (study/work.h) in the one mechanism of study/: their levels between the jobs
// they need and the jobs that need them, the folders and seed they are given, --job refusing while inputs are
// unfinished, --summary listing what is missing or failed and handing the finished jobs to the study's own
// summary, and a keep_going full run that goes on past a failed job. In process, with work that writes a file:
// nothing trains here (the binaries' tests run real work: test_benz_features_jobs.cpp, test_gaussian_jobs.cpp,
// test_benz_grid_runs.cpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "study/job_run.h"
#include "study/study.h"
#include "tests/test_experiments_util.h"
#include "util/atomic_file.h"

using namespace cw;
namespace fs = std::filesystem;
using cw_experiments_test::fresh_dir;
using cw_experiments_test::read_text;

namespace {

// Writes <dir>/done: its seed and, per input, "<arm>=<the input's done file>" (so a test sees what it was given).
study::Work note_work(const std::string& what, bool fail = false) {
    study::Work w;
    w.what = what;
    w.run = [fail](const study::WorkRun& r, std::ostream& out) {
        if (fail) throw std::runtime_error("no data for this one");
        std::string text = "seed " + std::to_string(r.seed) + "\n";
        for (const auto& [arm, dir] : r.inputs) text += arm + "=" + read_text(fs::path(dir) / "done");
        util::write_file_atomic((fs::path(r.dir) / "done").string(), text);
        out << "wrote " << r.dir << "\n";
        return 0;
    };
    w.finished = [](const std::string& dir) { return fs::exists(fs::path(dir) / "done"); };
    return w;
}

study::Arm work_arm(const std::string& name, const std::vector<std::string>& needs, bool fail = false) {
    study::Arm a;
    a.name = name;
    a.work = note_work("note", fail);
    a.needs = needs;
    return a;
}

// source → build → use, as benz_features' source model → construction → training on the set; plus "side".
study::Study chain() {
    study::Study s;
    s.title = "chain";
    s.arms = {work_arm("use", {"build"}), work_arm("build", {"source"}), work_arm("source", {}), work_arm("side", {})};
    return s;
}

int exit_code(const std::function<void()>& f) {
    try {
        f();
    } catch (const cli::ExitRequest& e) {
        return e.code;
    }
    return -1;
}

}  // namespace

TEST_CASE("study work: a construction sits between its source and its consumer, level by level, seed by seed",
          "[study][work]") {
    const auto jobs = study::study_jobs(chain(), "o", {0, 4});
    std::vector<std::string> ids;
    for (const auto& j : jobs) ids.push_back(j.id + "@" + std::to_string(j.level));
    CHECK(ids == std::vector<std::string>{"source/seed0@0", "side/seed0@0", "source/seed4@0", "side/seed4@0",
                                          "build/seed0@1", "build/seed4@1", "use/seed0@2", "use/seed4@2"});
    // A training arm that reads a work job's output: use_inputs gets the folder of the same seed's job.
    study::Study s = chain();
    study::Arm train_on_set = study::arm("train_on_set", train::JobConfig{}, "natural");
    train_on_set.needs = {"build"};
    train_on_set.use_inputs = [](train::JobConfig& job, const std::map<std::string, std::string>& inputs) {
        job.data.train_file = inputs.at("build") + "/set.safetensors";
    };
    s.arms.push_back(train_on_set);
    const auto more = study::study_jobs(s, "o", {0, 4});
    const study::StudyJob& t4 = study::find_job(more, "train_on_set/seed4");
    CHECK(t4.level == 2);
    cli::CommonFlags common;
    common.seed = 10;
    const study::Arm a = study::job_arm(s, t4, more, common);
    CHECK(a.name == "train_on_set/seed4");
    CHECK(a.job.common.seed == 14);
    CHECK(a.job.data.train_file == (fs::path("o") / "build/seed4").string() + "/set.safetensors");
    CHECK(study::input_dirs(s, study::find_job(more, "use/seed0"), more) ==
          std::map<std::string, std::string>{{"build", (fs::path("o") / "build/seed0").string()}});
}

TEST_CASE("study work: --job refuses while inputs are unfinished, runs with its folder, seed and inputs; --summary",
          "[study][work]") {
    const fs::path out = fresh_dir("cw_study_work");
    const study::Study s = chain();
    cli::CommonFlags common;
    common.out = out.string();
    common.seed = 7;
    study::StudyFlags flags;
    flags.seeds = "0,2";
    std::ostringstream log;
    int summaries = 0;
    study::Study with_summary = s;
    std::vector<std::string> summarised;
    with_summary.summary = [&](const std::vector<study::StudyJob>& finished, std::ostream&) {
        ++summaries;
        summarised.clear();
        for (const auto& j : finished) summarised.push_back(j.id);
        return 0;
    };
    auto job = [&](const std::string& id) {
        study::StudyFlags f = flags;
        f.job = id;
        return exit_code([&] { study::run_study(with_summary, common, log, f); });
    };
    // The consumer before its construction, the construction before its source: one line naming what is missing.
    REQUIRE_THROWS_WITH(job("use/seed2"), "job use/seed2 needs build/seed2 finished first (not finished yet)");
    REQUIRE_THROWS_WITH(job("build/seed2"), "job build/seed2 needs source/seed2 finished first (not finished yet)");
    CHECK(!fs::exists(out / "build/seed2"));   // refused before anything: no folder, no lock, no error file
    CHECK(job("source/seed2") == 0);
    CHECK(job("build/seed2") == 0);
    CHECK(job("use/seed2") == 0);
    // Each got its own folder, --seed + k, and its inputs' folders of the same seed.
    CHECK(read_text(out / "source/seed2/done") == "seed 9\n");
    CHECK(read_text(out / "use/seed2/done") == "seed 9\nbuild=seed 9\nsource=seed 9\n");
    CHECK(!fs::exists(out / "use/seed2/.lock"));   // released
    CHECK(job("use/seed2") == 0);                  // again: finished, skipped
    CHECK(log.str().find("use/seed2 finished before; skipped") != std::string::npos);

    // --summary: 3 of 8 finished; the rest listed; the study's own summary gets the finished jobs; exit 3.
    fs::create_directories(out / "side/seed0");
    std::ofstream(out / "side/seed0/partial") << "x";
    study::StudyFlags sf = flags;
    sf.summary = true;
    std::ostringstream text;
    CHECK(exit_code([&] { study::run_study(with_summary, common, text, sf); }) == study::kIncompleteExit);
    CHECK(text.str().find("3 of 8 jobs finished") != std::string::npos);
    CHECK(text.str().find("  source/seed0: not started\n") != std::string::npos);
    CHECK(text.str().find("  side/seed0: started, not running\n") != std::string::npos);
    CHECK(summaries == 1);
    CHECK(summarised == std::vector<std::string>{"source/seed2", "build/seed2", "use/seed2"});
    // --list-jobs --level 1: the constructions.
    study::StudyFlags lf = flags;
    lf.list_jobs = true;
    lf.level = 1;
    std::ostringstream listed;
    CHECK(exit_code([&] { study::run_study(s, common, listed, lf); }) == 0);
    CHECK(listed.str() == "build/seed0\nbuild/seed2\n");
    fs::remove_all(out);
}

TEST_CASE("study work: a keep_going full run goes on past a failed job, skips what needs it, and exits 1",
          "[study][work]") {
    const fs::path out = fresh_dir("cw_study_work_fail");
    study::Study s = chain();
    s.arms[2] = work_arm("source", {}, /*fail=*/true);
    cli::CommonFlags common;
    common.out = out.string();
    std::ostringstream log;
    REQUIRE_THROWS_WITH(study::run_study(s, common, log), "no data for this one");   // the first failure ends it
    CHECK(read_text(out / "source/job_error.txt") == "no data for this one\n");
    CHECK(!fs::exists(out / "side/done"));

    s.keep_going = true;
    std::vector<std::string> summarised;
    s.summary = [&](const std::vector<study::StudyJob>& finished, std::ostream&) {
        for (const auto& j : finished) summarised.push_back(j.id);
        return 0;
    };
    std::ostringstream log2;
    CHECK(study::run_study(s, common, log2) == 1);
    CHECK(fs::exists(out / "side/done"));
    CHECK(summarised == std::vector<std::string>{"side"});
    CHECK(log2.str().find("job build failed: job build needs source finished first") != std::string::npos);
    CHECK(log2.str().find("3 of 4 jobs failed (source, build, use)") != std::string::npos);
    study::StudyFlags sf;
    sf.summary = true;
    std::ostringstream text;
    CHECK(exit_code([&] { study::run_study(s, common, text, sf); }) == study::kIncompleteExit);
    CHECK(text.str().find("  source: failed: no data for this one\n") != std::string::npos);
    fs::remove_all(out);
}
