// A study spread over processes (study/jobs.h, study/job_lock.h, study/slurm.h): the jobs and their levels, the
// lock, and real runs — GNU parallel level by level against one process (bit for bit), a job killed with SIGTERM
// and with SIGKILL continuing to the numbers of an uninterrupted run, --summary listing what is missing, and the
// generated Slurm scripts.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "util/atomic_file.h"
#include "report/subprocess.h"
#include "study/job_lock.h"
#include "study/slurm.h"
#include "study/study.h"
#include "tests/skip.h"
#include "tests/test_experiments_util.h"
#include "tests/test_process.h"
#include "tests/test_study_cluster_util.h"

using namespace cw;
namespace fs = std::filesystem;
using cw_experiments_test::fresh_dir;
using cw_experiments_test::read_text;
using cw_test::Spawned;
using namespace cw_cluster_test;

namespace {

study::Study dependent_study() {
    train::JobConfig base;
    study::Study s;
    s.title = "deps";
    s.arms = {study::arm("natural", base, "natural"), study::arm("pgd_at", base, "pgd_at"),
              study::arm("frl", base, "frl_rwrm"), study::arm("after_frl", base, "natural")};
    s.arms[2].init_arm = "pgd_at";
    s.arms[2].init_file = "best_robust.safetensors";
    s.arms[3].needs = {"frl", "natural"};
    return s;
}

}  // namespace

TEST_CASE("study jobs: levels follow the needs, seeds multiply the arms, ids and errors", "[study][cluster]") {
    const study::Study s = dependent_study();
    const auto jobs = study::study_jobs(s, "out", {});
    REQUIRE(jobs.size() == 4);
    CHECK(jobs[0].id == "natural");
    CHECK(jobs[1].id == "pgd_at");
    CHECK(jobs[2].id == "frl");
    CHECK(jobs[2].level == 1);
    CHECK(jobs[2].needs == std::vector<std::string>{"pgd_at"});
    CHECK(jobs[3].id == "after_frl");
    CHECK(jobs[3].level == 2);
    CHECK(jobs[3].dir == (fs::path("out") / "after_frl").string());

    const auto seeded = study::study_jobs(s, "out", {0, 5});
    REQUIRE(seeded.size() == 8);
    const std::vector<std::string> ids = {"natural/seed0", "pgd_at/seed0", "natural/seed5", "pgd_at/seed5",
                                          "frl/seed0",     "frl/seed5",    "after_frl/seed0", "after_frl/seed5"};
    for (size_t i = 0; i < ids.size(); ++i) CHECK(seeded[i].id == ids[i]);
    CHECK(seeded[5].needs == std::vector<std::string>{"pgd_at/seed5"});
    CHECK(seeded[7].needs == std::vector<std::string>{"frl/seed5", "natural/seed5"});
    CHECK(study::find_job(seeded, "3").id == "pgd_at/seed5");
    CHECK(study::find_job(seeded, "frl/seed5").index == 5);
    REQUIRE_THROWS_WITH(study::find_job(seeded, "frl/seed9"), Catch::Contains("--job: no job 'frl/seed9'"));
    REQUIRE_THROWS_WITH(study::find_job(seeded, "8"), Catch::Contains("0..7"));

    CHECK(study::parse_seeds("0,1,2") == std::vector<uint64_t>{0, 1, 2});
    REQUIRE_THROWS_WITH(study::parse_seeds("0,x"), "--seeds: 'x' is not a whole number (expected e.g. 0,1,2)");
    REQUIRE_THROWS_WITH(study::parse_seeds("1,1"), "--seeds: seed 1 is listed twice");

    study::Study cyclic = s;
    cyclic.arms[1].needs = {"after_frl"};
    REQUIRE_THROWS_WITH(study::study_jobs(cyclic, "out", {}), Catch::Contains("form a cycle"));
    study::Study unknown = s;
    unknown.arms[0].needs = {"nope"};
    REQUIRE_THROWS_WITH(study::study_jobs(unknown, "out", {}),
                        "study: arm 'natural' needs arm 'nope', which this study does not have");
}

TEST_CASE("study jobs: the lock is exclusive, released on exit, taken over from a dead pid", "[study][cluster]") {
    const fs::path dir = fresh_dir("cw_job_lock");
    {
        study::JobLock lock(dir.string(), "job a");
        REQUIRE(fs::exists(dir / ".lock"));
        REQUIRE_THROWS_WITH(study::JobLock(dir.string(), "job a"),
                            Catch::Contains("job a: running in pid " + std::to_string(getpid())));
        REQUIRE(study::live_lock_holder(dir.string()));
    }
    REQUIRE(!fs::exists(dir / ".lock"));
    // A process that died (SIGKILL) left its lock: pid of a child that has exited.
    const pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);
    cw::util::write_file_atomic((dir / ".lock").string(), std::to_string(child) + " " + study::this_host() + "\n");
    REQUIRE(!study::live_lock_holder(dir.string()));
    { study::JobLock taken(dir.string(), "job a"); }
    // Another host's lock cannot be checked from here: refused, naming the host.
    cw::util::write_file_atomic((dir / ".lock").string(), "1 some-other-host\n");
    REQUIRE_THROWS_WITH(study::JobLock(dir.string(), "job a"), Catch::Contains("on some-other-host"));
    fs::remove_all(dir);
}

TEST_CASE("study cluster: GNU parallel level by level gives the single process's numbers bit for bit",
          "[study][cluster]") {
    if (!report::program_in_path("parallel")) CW_SKIP("no GNU parallel (apt-get install parallel)");
    const fs::path one = fresh_dir("cw_cluster_one"), par = fresh_dir("cw_cluster_par");
    REQUIRE(run(fairtat("--out " + one.string())) == 0);
    std::string text;
    REQUIRE(run(fairtat("--out " + par.string() + " --list-jobs"), &text) == 0);
    CHECK(text == "natural\npgd_at\nfrl\n");
    // A job whose input is not finished stops at once, naming it.
    REQUIRE(run(fairtat("--out " + par.string() + " --job frl"), &text) == 1);
    CHECK(text.find("job frl needs pgd_at finished first") != std::string::npos);
    // --summary before anything ran: lists every job as not started, exit 3.
    REQUIRE(run(fairtat("--out " + par.string() + " --summary"), &text) == study::kIncompleteExit);
    CHECK(text.find("0 of 3 jobs finished") != std::string::npos);
    CHECK(text.find("  frl: not started") != std::string::npos);
    const std::string bin = fairtat("--out " + par.string());
    for (int level = 0; level < 2; ++level)
        REQUIRE(run("sh -c \"" + bin + " --list-jobs --level " + std::to_string(level) + " | parallel -j 2 " + bin +
                    " --job {}\"") == 0);
    REQUIRE(run(fairtat("--out " + par.string() + " --list-jobs --level 2"), &text) == 0);
    CHECK(text.empty());
    REQUIRE(run(fairtat("--out " + par.string() + " --summary"), &text) == 0);
    CHECK(text.find("3 of 3 jobs finished") != std::string::npos);
    same_results(one, par, {"natural", "pgd_at", "frl"});
    fs::remove_all(one);
    fs::remove_all(par);
}

TEST_CASE("study cluster: seeds; a job killed by SIGTERM or SIGKILL continues to the uninterrupted numbers",
          "[study][cluster]") {
    const fs::path one = fresh_dir("cw_cluster_seeds_one"), jobs = fresh_dir("cw_cluster_seeds_jobs");
    const std::string seeds = " --seeds 0,1 --arms natural,pgd_at --epochs 12";
    REQUIRE(run(fairtat("--out " + one.string() + seeds)) == 0);
    const std::string md = read_text(one / "summary.md");
    CHECK(md.find("Mean ± std over seeds") != std::string::npos);
    CHECK(md.find("| pgd_at | 2 |") != std::string::npos);
    CHECK(md.find("Seed 1:") != std::string::npos);
    std::string text;
    REQUIRE(run(fairtat("--out " + jobs.string() + seeds + " --list-jobs"), &text) == 0);
    CHECK(text == "natural/seed0\npgd_at/seed0\nnatural/seed1\npgd_at/seed1\n");
    for (const char* id : {"natural/seed0", "natural/seed1", "pgd_at/seed1"})
        REQUIRE(run(fairtat("--out " + jobs.string() + seeds + " --job " + id)) == 0);
    {   // SIGTERM in training: state saved, 143, the lock released
        Spawned p(fairtat("--out " + jobs.string() + seeds + " --job pgd_at/seed0"));
        REQUIRE(p.wait_for("epoch 3/12", 300));
        kill(p.pid, SIGTERM);
        REQUIRE(p.finish() == 143);
        CHECK(fs::exists(jobs / "pgd_at/seed0/state.safetensors"));
        CHECK(!fs::exists(jobs / "pgd_at/seed0/.lock"));
    }
    {   // SIGKILL later on: the lock stays behind, stale; the job restarts from its last saved state
        Spawned p(fairtat("--out " + jobs.string() + seeds + " --job pgd_at/seed0"));
        REQUIRE(p.wait_for("epoch 8/12", 300));
        kill(p.pid, SIGKILL);
        REQUIRE(p.finish() == 128 + SIGKILL);
        CHECK(fs::exists(jobs / "pgd_at/seed0/.lock"));
    }
    REQUIRE(run(fairtat("--out " + jobs.string() + seeds + " --summary"), &text) == study::kIncompleteExit);
    CHECK(text.find("pgd_at/seed0: started, not running") != std::string::npos);
    REQUIRE(run(fairtat("--out " + jobs.string() + seeds + " --job pgd_at/seed0"), &text) == 0);
    CHECK(text.find("resum") != std::string::npos);
    REQUIRE(run(fairtat("--out " + jobs.string() + seeds + " --summary")) == 0);
    for (const char* j : {"natural/seed0", "pgd_at/seed0", "natural/seed1", "pgd_at/seed1"}) {
        INFO(j);
        CHECK(evaluations(one / j / "eval_last/results.json") == evaluations(jobs / j / "eval_last/results.json"));
    }
    CHECK(summary_tables(one / "summary.md").substr(0, 200) == summary_tables(jobs / "summary.md").substr(0, 200));
    fs::remove_all(one);
    fs::remove_all(jobs);
}

// A time sbatch would refuse is found before any script is written, not when they are submitted; a partition name
// with a line break would have written a line of its own into every script. Seen failing without the check.
TEST_CASE("study cluster: --slurm-time and --slurm-partition are checked before the scripts are written", "[study][cluster]") {
    study::SlurmOptions o;
    for (const char* good : {"30", "30:00", "24:00:00", "2-12", "2-12:30", "2-12:30:00", "UNLIMITED", "infinite"}) {
        o.time = good;
        CHECK_NOTHROW(study::check_slurm_options(o));
    }
    for (const char* bad : {"abc", "", "1h", "2:00:00:00", "-1", "2-", "24:00 "}) {
        o.time = bad;
        CHECK_THROWS_WITH(study::check_slurm_options(o),
                          std::string("--slurm-time: expected Slurm's forms MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                                      "D-HH:MM:SS, got '") + bad + "'");
    }
    o.time = "1:00:00";
    for (const char* good : {"", "gpu", "gpu_a100,cpu-long"}) {
        o.partition = good;
        CHECK_NOTHROW(study::check_slurm_options(o));
    }
    o.partition = "gpu\n#SBATCH --account=x";
    CHECK_THROWS_WITH(study::check_slurm_options(o), Catch::StartsWith("--slurm-partition: expected a partition name"));
    const fs::path dir = fresh_dir("cw_cluster_slurm_bad");
    CHECK_THROWS(study::write_slurm_scripts({}, (dir / "slurm").string(), "t", o, "cmd", dir.string()));
    CHECK_FALSE(fs::exists(dir / "slurm"));
    fs::remove_all(dir);
}

TEST_CASE("study cluster: --slurm writes an array per level, afterok between levels, afterany for the summary",
          "[study][cluster]") {
    const fs::path dir = fresh_dir("cw_cluster_slurm");
    std::string text;
    REQUIRE(run(fairtat("--out " + dir.string() + " --seeds 0,1 --slurm --slurm-gpus 2 --slurm-cpus 6 "
                        "--slurm-time 2:00:00 --slurm-partition gpu"), &text) == 0);
    CHECK(text.find("submit them with:\n  sh " + (dir / "slurm" / "submit.sh").string()) != std::string::npos);
    const fs::path s = dir / "slurm";
    CHECK(read_text(s / "level0.jobs") == "natural/seed0\npgd_at/seed0\nnatural/seed1\npgd_at/seed1\n");
    CHECK(read_text(s / "level1.jobs") == "frl/seed0\nfrl/seed1\n");
    const std::string l1 = read_text(s / "level1.sbatch");
    for (const char* line : {"#SBATCH --array=0-1\n", "#SBATCH --gres=gpu:2\n", "#SBATCH --cpus-per-task=6\n",
                             "#SBATCH --time=2:00:00\n", "#SBATCH --partition=gpu\n", "#SBATCH --signal=B:TERM@120\n",
                             "#SBATCH --requeue\n", " --seeds 0,1 --yes --job \"$job\"\n"})
        CHECK(l1.find(line) != std::string::npos);
    CHECK(l1.substr(l1.find("\nexec ")).find("--slurm") == std::string::npos);   // the job runs, not --slurm again
    const std::string submit = read_text(s / "submit.sh");
    CHECK(submit.find("j1=$(sbatch --parsable --kill-on-invalid-dep=yes --dependency=afterok:$j0 ") != std::string::npos);
    CHECK(submit.find("--dependency=afterany:$j0:$j1 ") != std::string::npos);
    CHECK(read_text(s / "summary.sbatch").find(" --summary\n") != std::string::npos);
    CHECK(read_text(s / "summary.sbatch").find("--gres") == std::string::npos);
    fs::remove_all(dir);
}
