// A study on a real Slurm (study/slurm.h): tests/slurm_one_node.sh starts a one-node cluster (munged, slurmctld and
// slurmd on localhost, everything in a temporary folder), the scripts --slurm wrote are submitted with their own
// submit.sh, and what the jobs wrote is compared with the same study run in one process, bit for bit. Where Slurm
// cannot run (not root, not installed, daemons that do not come up) the tests skip, counted, saying why; with
// CLASSWISE_REQUIRE_SLURM=1 (CI, which installs Slurm) that is a failure instead.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_slurm_one_node.h"
#include "tests/test_study_cluster_util.h"

namespace fs = std::filesystem;
using cw_experiments_test::fresh_dir;
using cw_experiments_test::read_text;
using namespace cw_cluster_test;
using namespace cw_slurm_test;

TEST_CASE("study on Slurm: a one-node cluster runs the --slurm scripts level by level, bit for bit one process's numbers",
          "[study][cluster][slurm]") {
    OneNodeSlurm slurm("cw_slurm_cluster");
    CW_SKIP_WITHOUT_SLURM(slurm);
    const fs::path one = fresh_dir("cw_slurm_one"), work = fresh_dir("cw_slurm_work"),
                   elsewhere = fresh_dir("cw_slurm_elsewhere");
    fs::create_directories(work);
    fs::create_directories(elsewhere);
    // Two seeds: level 0 is an array of four (natural and pgd_at per seed), level 1 of two (frl per seed, each
    // fine-tuning its seed's pgd_at checkpoint). One CPU per job, and the node has eight: a level's jobs all run
    // at once, and a job of level 1 would start beside level 0 if the scripts did not hold it back.
    const std::string study = " --seeds 0,1 --epochs 1";
    REQUIRE(run(fairtat("--out " + one.string() + study)) == 0);

    // --out relative to the folder --slurm runs in, submitted from another folder: the jobs must run where --slurm
    // ran (#SBATCH --chdir), not where sbatch was called (Slurm's default).
    std::string text;
    REQUIRE(run("env -C " + work.string() + " " +
                    fairtat("--out slurm_study" + study + " --slurm --slurm-gpus 0 --slurm-cpus 1 --slurm-time 0:10:00"),
                &text) == 0);
    const fs::path out = work / "slurm_study", scripts = out / "slurm";
    // The jobs' environment is the submitter's (sbatch exports it): one thread, no figures, as the run above.
    REQUIRE(run("env -C " + elsewhere.string() + " " + slurm.env() +
                    "CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " + submit_command(text),
                &text) == 0);
    const Submitted ids = submitted_ids(text);
    REQUIRE(ids.levels.size() == 2);

    const bool ended = slurm.wait_all_ended(180);
    INFO("squeue -t all:\n" << cw_test::run_shell(slurm.env() + "squeue -t all 2>&1").text);
    INFO("summary.log:\n" << text_or_missing(scripts / "summary.log"));
    REQUIRE(ended);
    const auto jobs = slurm.jobs();
    for (int t = 0; t < 4; ++t) CHECK(state_of(jobs, ids.levels[0] + "_" + std::to_string(t)) == "level0 COMPLETED");
    for (int t = 0; t < 2; ++t) CHECK(state_of(jobs, ids.levels[1] + "_" + std::to_string(t)) == "level1 COMPLETED");
    CHECK(state_of(jobs, ids.summary) == "summary COMPLETED");
    // Array task t of level L ran line t+1 of level<L>.jobs: the job at that place of --list-jobs.
    const std::vector<std::string> list = {"natural/seed0", "pgd_at/seed0", "natural/seed1", "pgd_at/seed1",
                                           "frl/seed0", "frl/seed1"};
    for (int i = 0; i < 6; ++i) {
        const fs::path log = scripts / ("level" + std::to_string(i / 4) + "_" + std::to_string(i % 4) + ".log");
        INFO(log.string());
        CHECK(text_or_missing(log).find("== job " + std::to_string(i) + " of 6: ") != std::string::npos);
        CHECK(fs::exists(out / list[i] / "eval_last" / "results.json"));
    }
    CHECK(read_text(scripts / "summary.log").find("6 of 6 jobs finished") != std::string::npos);
    CHECK(!fs::exists(elsewhere / "slurm_study"));
    same_results(one, out, list);
    fs::remove_all(one);
    fs::remove_all(work);
    fs::remove_all(elsewhere);
}

TEST_CASE("study on Slurm: a failed job cancels the level after it, and the summary still runs and names it",
          "[study][cluster][slurm]") {
    OneNodeSlurm slurm("cw_slurm_cluster_fail");
    CW_SKIP_WITHOUT_SLURM(slurm);
    const fs::path out = fresh_dir("cw_slurm_fail");
    // pgd_at fails at once: its state file, which a job resumes from, is not a checkpoint.
    fs::create_directories(out / "pgd_at");
    cw::util::write_file_atomic((out / "pgd_at" / "state.safetensors").string(), "not a checkpoint");
    std::string text;
    REQUIRE(run(fairtat("--out " + out.string() + " --epochs 1 --slurm --slurm-gpus 0 --slurm-cpus 1"), &text) == 0);
    REQUIRE(run(slurm.env() + "CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " + submit_command(text), &text) == 0);
    const Submitted ids = submitted_ids(text);
    REQUIRE(ids.levels.size() == 2);

    // Without --kill-on-invalid-dep, level 1 would wait for ever (DependencyNeverSatisfied) and the summary after it.
    const bool ended = slurm.wait_all_ended(60);
    INFO("squeue -t all:\n" << cw_test::run_shell(slurm.env() + "squeue -t all 2>&1").text);
    REQUIRE(ended);
    const auto jobs = slurm.jobs();
    CHECK(state_of(jobs, ids.levels[0] + "_0") == "level0 COMPLETED");   // natural
    CHECK(state_of(jobs, ids.levels[0] + "_1") == "level0 FAILED");      // pgd_at
    CHECK(state_of(jobs, ids.levels[1] + "_[0]") == "level1 CANCELLED");  // frl: never started
    CHECK(state_of(jobs, ids.summary) == "summary FAILED");               // exit 3: the study is not complete
    const std::string summary = read_text(out / "slurm" / "summary.log");
    CHECK(summary.find("1 of 3 jobs finished") != std::string::npos);
    CHECK(summary.find("  pgd_at: failed: " + (out / "pgd_at" / "state.safetensors").string()) != std::string::npos);
    CHECK(summary.find("  frl: not started") != std::string::npos);
    fs::remove_all(out);
}

TEST_CASE("study on Slurm: the time-limit signal and a requeue stop a job with its state, and it continues to the "
          "uninterrupted numbers",
          "[study][cluster][slurm]") {
    OneNodeSlurm slurm("cw_slurm_cluster_signals");
    CW_SKIP_WITHOUT_SLURM(slurm);
    const fs::path one = fresh_dir("cw_slurm_signals_one"), out = fresh_dir("cw_slurm_signals");
    // Forty short epochs: after the fifth, enough of the run is left that a requeue lands in it. With eight, a fast
    // CPU (two Zen 5 cores) finished the last three before `scontrol requeue` reached the job, and nothing stopped.
    const std::string study = " --arms pgd_at --epochs 40";
    REQUIRE(run(fairtat("--out " + one.string() + study)) == 0);
    std::string text;
    REQUIRE(run(fairtat("--out " + out.string() + study + " --slurm --slurm-gpus 0 --slurm-cpus 1"), &text) == 0);
    const std::string submit = slurm.env() + "CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " + submit_command(text);
    const fs::path log = out / "slurm" / "level0_0.log", summary_log = out / "slurm" / "summary.log";
    // The log is appended to by every start of the job (--open-mode=append): wait for a line after `from`.
    auto wait_in_log = [&](const std::string& line, size_t from) {
        for (int i = 0; i < 600; ++i) {
            if (fs::exists(log) && cw::util::read_file_text(log.string()).find(line, from) != std::string::npos)
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    };

    // What --signal=B:TERM@<s> does before the time limit: SIGTERM to the batch shell only. The script exec'd the
    // binary, so the binary gets it: it saves its state and exits 143; Slurm does not start it again.
    REQUIRE(run(submit, &text) == 0);
    const Submitted first = submitted_ids(text);
    REQUIRE(wait_in_log("epoch 2/40", 0));
    REQUIRE(run(slurm.env() + "scancel --batch --signal=TERM " + first.levels[0] + "_0") == 0);
    bool ended = slurm.wait_all_ended(60);
    INFO("level0_0.log:\n" << text_or_missing(log));
    INFO("summary.log:\n" << text_or_missing(summary_log));
    REQUIRE(ended);
    auto jobs = slurm.jobs();
    CHECK(state_of(jobs, first.levels[0] + "_0") == "level0 FAILED");
    CHECK(state_of(jobs, first.summary) == "summary FAILED");
    CHECK(read_text(log).find("stopped by SIGTERM") != std::string::npos);
    CHECK(read_text(summary_log).find("  pgd_at: started, not running") != std::string::npos);

    // Submitted again, it continues from its state; a requeue (preemption) stops it again, and Slurm starts it
    // once more (#SBATCH --requeue), continuing from the state it saved then.
    const size_t second_start = read_text(log).size();
    REQUIRE(run(submit, &text) == 0);
    const Submitted second = submitted_ids(text);
    REQUIRE(wait_in_log("resumed from ", second_start));  // then most of the 40 epochs are still to run
    REQUIRE(run(slurm.env() + "scontrol requeue " + second.levels[0] + "_0") == 0);
    ended = slurm.wait_all_ended(90);
    REQUIRE(ended);
    jobs = slurm.jobs();
    CHECK(state_of(jobs, second.levels[0] + "_0") == "level0 COMPLETED");
    CHECK(state_of(jobs, second.summary) == "summary COMPLETED");
    const std::string after = read_text(log).substr(second_start);
    const size_t resumed = after.find("resumed from "), stopped = after.find("stopped by SIGTERM"),
                 again = after.find("resumed from ", resumed + 1);
    CHECK(resumed != std::string::npos);
    CHECK(stopped != std::string::npos);
    CHECK((again != std::string::npos && again > stopped));
    CHECK(read_text(summary_log).find("1 of 1 jobs finished") != std::string::npos);
    same_results(one, out, {"pgd_at"});
    fs::remove_all(one);
    fs::remove_all(out);
}
