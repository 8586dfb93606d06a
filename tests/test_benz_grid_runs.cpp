// benz_universality running real cells on the synthetic set (no files needed, about a second a cell). Its cells are
// study jobs (study/grid_study.h), spread with the flags every experiment binary has: --list-jobs, --job, --summary,
// --slurm, --seeds. Here: a cell run by --job is bit for bit the cell of the single-process run and the `train`
// tool's run of the same flags; two cells through GNU parallel, then --summary gathers them and lists the rest; a
// half-done grid resumed by a full run that does not retrain the finished cells; a cell whose dataset is missing
// fails in one line and a full run goes on without it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "study/study.h"
#include "tests/skip.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

namespace {

const char* kBase = "--dataset synthetic --arch lenet5 --train-n 200 --eval-n 100 --epoch-eval-n 50 --batch-size 50 "
                    "--epochs 1 --attack-steps 2 --eval-steps 2 --final-attacks fgsm --final-checkpoints last "
                    "--optimizer adam --lr 0.002";

// 2 settings × 2 seeds, 4 cells of about a second each.
fs::path write_grid(const fs::path& dir, const std::string& extra_setting = "") {
    fs::create_directories(dir);
    const fs::path file = dir / "grid.json";
    std::ofstream(file) << R"({"title": "test grid", "seeds": [0, 1], "base": ")" << kBase << R"(",
      "settings": [{"name": "nat", "flags": "--method natural"}, {"name": "at", "flags": "--method pgd_at"})"
                        << extra_setting << "]}\n";
    return file;
}

std::string args(const fs::path& grid, const fs::path& out) {
    return "--device cpu --grid " + grid.string() + " --out " + (out / "runs").string();
}

// One engine thread: the sums' order is fixed, so separate processes agree bit for bit.
Output run_grid(const std::string& arguments, const std::string& streams = "2>&1") {
    return cw_test::run_shell("env CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " +
                              (repo_root() / "experiments" / "benz_universality").string() + " " + arguments + " " +
                              streams);
}

nlohmann::json summary_json(const fs::path& out) {
    return nlohmann::json::parse(read_text(out / "runs" / "grid_summary.json"));
}

// Every evaluation of a results.json, without the wall time each took.
std::string evaluations(const fs::path& results) {
    nlohmann::json e = contract_results(results).at("evaluations");
    for (auto& x : e) x.erase("time_s");
    return e.dump();
}

}  // namespace

TEST_CASE("benz grid runs: a cell run by --job is the single-process run's cell and the train tool's run, bit for bit",
          "[benz-grid-run]") {
    const fs::path dir = fresh_dir("benz_grid_jobs");
    const fs::path grid = write_grid(dir);
    const fs::path one = dir / "one", jobs = dir / "jobs";
    const Output full = run_grid(args(grid, one));
    INFO(full.text);
    REQUIRE(full.code == 0);
    const Output list = run_grid(args(grid, jobs) + " --list-jobs", "2>/dev/null");
    REQUIRE(list.code == 0);
    REQUIRE(list.text == "nat/seed0\nat/seed0\nnat/seed1\nat/seed1\n");   // the cells, seed-major, one level
    for (const std::string id : {"at/seed1", "nat/seed0", "1", "nat/seed1"}) {   // any order; by id or index
        const Output o = run_grid(args(grid, jobs) + " --job " + id);
        INFO(o.text);
        REQUIRE(o.code == 0);
    }
    for (const std::string cell : {"nat/seed0", "at/seed0", "nat/seed1", "at/seed1"}) {
        INFO(cell);
        CHECK(evaluations(one / "runs" / cell / "eval_last/results.json") ==
              evaluations(jobs / "runs" / cell / "eval_last/results.json"));
    }
    // The cell at/seed1 is `train` with the grid's flags, the setting's and the cell's seed: the per-class numbers
    // of today's single-process grid, computed without the grid or the study.
    const fs::path ref = dir / "train_at_seed1";
    const Output train = cw_test::run_shell("env CLASSWISE_THREADS=1 " + (repo_root() / "build/tools/train").string() +
                                            " --device cpu " + kBase + " --method pgd_at --seed 1 --out " +
                                            ref.string() + " 2>&1");
    INFO(train.text);
    REQUIRE(train.code == 0);
    CHECK(evaluations(ref / "eval_last/results.json") == evaluations(jobs / "runs/at/seed1/eval_last/results.json"));
    CHECK(evaluations(ref / "eval_last/results.json") != evaluations(jobs / "runs/at/seed0/eval_last/results.json"));
    // --summary over the jobs' cells: the grid summary of the single-process run, folders aside.
    REQUIRE(run_grid(args(grid, jobs) + " --summary").code == 0);
    nlohmann::json a = summary_json(one), b = summary_json(jobs);
    for (auto* j : {&a, &b})
        for (auto& s : j->at("settings"))
            for (auto& r : s.at("runs")) r.erase("dir");
    CHECK(a.dump() == b.dump());
    fs::remove_all(dir);
}

TEST_CASE("benz grid runs: two cells through GNU parallel, then --summary gathers what is finished", "[benz-grid-run]") {
    if (cw_test::run_shell("command -v parallel >/dev/null 2>&1").code != 0)
        CW_SKIP("GNU parallel is not installed (Debian: apt-get install parallel; scripts/setup_debian.sh)");
    const fs::path dir = fresh_dir("benz_grid_parallel");
    const fs::path grid = write_grid(dir);
    // Cells nat/seed0 and at/seed1, one process each, one thread each, as the docs say.
    const std::string binary = (repo_root() / "experiments" / "benz_universality").string();
    const Output par = cw_test::run_shell("printf 'nat/seed0\\nat/seed1\\n' | CLASSWISE_GNUPLOT=/nonexistent "
                                          "CLASSWISE_THREADS=1 parallel -j2 --halt now,fail=1 " + binary + " " +
                                          args(grid, dir) + " --job {} > " + (dir / "parallel.log").string() + " 2>&1");
    INFO(read_text(dir / "parallel.log"));
    REQUIRE(par.code == 0);
    REQUIRE(fs::exists(dir / "runs" / "nat" / "seed0" / "eval_last" / "results.json"));
    REQUIRE(fs::exists(dir / "runs" / "at" / "seed1" / "eval_last" / "results.json"));
    REQUIRE_FALSE(fs::exists(dir / "runs" / "at" / "seed0"));

    const Output sum = run_experiment("benz_universality", args(grid, dir) + " --summary");
    INFO(sum.text);
    REQUIRE(sum.code == cw::study::kIncompleteExit);   // the study's --summary: not every job finished
    CHECK(sum.text.find("2 of 4 jobs finished") != std::string::npos);
    CHECK(sum.text.find("  at/seed0: not started\n") != std::string::npos);
    CHECK(sum.text.find("  nat/seed1: not started\n") != std::string::npos);
    const nlohmann::json j = summary_json(dir);
    REQUIRE(j.at("finished_cells") == 2);
    REQUIRE(j.at("unfinished_cells").size() == 2);
    REQUIRE(j.at("unfinished_cells")[0].at("cell") == "at/seed0");
    REQUIRE(j.at("unfinished_cells")[0].at("state") == "missing");
    REQUIRE(j.at("settings").size() == 2);
    // The numbers gathered are the cells' own: nat's seed-0 per-class clean accuracy is its results.json's.
    const nlohmann::json r = contract_results(dir / "runs" / "nat" / "seed0" / "eval_last" / "results.json");
    REQUIRE(j.at("settings")[0].at("runs")[0].at("clean") == r.at("evaluations")[0].at("per_class_accuracy"));
    const std::string md = read_text(dir / "runs" / "summary.md");
    REQUIRE(md.find("2 of 4 cells finished") != std::string::npos);
    REQUIRE(md.find("- at/seed0: missing") != std::string::npos);
    REQUIRE(fs::exists(dir / "runs" / "index.html"));
    REQUIRE(fs::exists(dir / "runs" / "compare" / "synthetic" / "compare.html"));
    fs::remove_all(dir);
}

TEST_CASE("benz grid runs: a full run resumes a half-done grid without retraining finished cells", "[benz-grid-run]") {
    const fs::path dir = fresh_dir("benz_grid_resume");
    const fs::path grid = write_grid(dir);
    for (const std::string cell : {"0", "at/seed0"}) {   // the first two cells, by index and by id
        const Output o = run_experiment("benz_universality", args(grid, dir) + " --job " + cell);
        INFO(o.text);
        REQUIRE(o.code == 0);
    }
    const fs::path done[] = {dir / "runs" / "nat" / "seed0", dir / "runs" / "at" / "seed0"};
    std::vector<fs::file_time_type> before;
    for (const fs::path& d : done) {
        before.push_back(fs::last_write_time(d / "last.safetensors"));
        before.push_back(fs::last_write_time(d / "eval_last" / "results.json"));
    }
    const Output full = run_experiment("benz_universality", args(grid, dir));
    INFO(full.text);
    REQUIRE(full.code == 0);
    REQUIRE(full.text.find("nat/seed0 finished before; skipped") != std::string::npos);
    REQUIRE(full.text.find("at/seed0 finished before; skipped") != std::string::npos);
    REQUIRE(full.text.find("nat/seed1 (natural) into") != std::string::npos);
    REQUIRE(full.text.find("at/seed1 (pgd_at) into") != std::string::npos);
    std::vector<fs::file_time_type> after;
    for (const fs::path& d : done) {
        after.push_back(fs::last_write_time(d / "last.safetensors"));
        after.push_back(fs::last_write_time(d / "eval_last" / "results.json"));
    }
    REQUIRE(after == before);   // neither retrained nor re-evaluated
    const nlohmann::json j = summary_json(dir);
    REQUIRE(j.at("finished_cells") == 4);
    REQUIRE(j.at("unfinished_cells").empty());
    // Both settings have two seeds: the diagonal (the seed noise floor) is defined for the clean accuracies unless
    // a run's per-class accuracies are all equal.
    REQUIRE(j.at("agreement").at("synthetic").at("clean").at("settings").size() == 2);
    // A second full run does nothing but the summary.
    const Output again = run_experiment("benz_universality", args(grid, dir));
    REQUIRE(again.code == 0);
    REQUIRE(again.text.find("(natural) into") == std::string::npos);   // no "<cell> (<method>) into <dir>"
    REQUIRE(again.text.find("(pgd_at) into") == std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("benz grid runs: a cell without its dataset fails in one line; a full run and the summary go on without it",
          "[benz-grid-run]") {
    const fs::path dir = fresh_dir("benz_grid_missing");
    const fs::path grid = write_grid(dir, R"(, {"name": "c100", "flags": "--dataset cifar100 --method natural"})");
    fs::create_directories(dir / "empty_data");
    const std::string data = " --data-dir " + (dir / "empty_data").string();
    const Output o = run_experiment("benz_universality", args(grid, dir) + data + " --job c100/seed0", "2>&1 >/dev/null");
    REQUIRE(o.code == 1);
    REQUIRE(line_count(o.text) == 1);
    REQUIRE(o.text.find("benz_universality: ") == 0);
    REQUIRE(o.text.find("cifar") != std::string::npos);
    const fs::path error_file = dir / "runs" / "c100" / "seed0" / "job_error.txt";
    REQUIRE(fs::exists(error_file));
    // A full run trains every other cell, then summarises, lists the failed ones and exits 1.
    const Output full = run_experiment("benz_universality", args(grid, dir) + data);
    INFO(full.text);
    REQUIRE(full.code == 1);
    CHECK(full.text.find("2 of 6 jobs failed (c100/seed0, c100/seed1)") != std::string::npos);
    for (const std::string cell : {"nat/seed0", "at/seed0", "nat/seed1", "at/seed1"})
        CHECK(fs::exists(dir / "runs" / cell / "eval_last" / "results.json"));
    const Output sum = run_experiment("benz_universality", args(grid, dir) + " --summary");
    REQUIRE(sum.code == cw::study::kIncompleteExit);
    CHECK(sum.text.find("  c100/seed0: failed: ") != std::string::npos);
    const nlohmann::json j = summary_json(dir);
    REQUIRE(j.at("finished_cells") == 4);
    bool listed = false;
    for (const auto& c : j.at("unfinished_cells"))
        if (c.at("cell") == "c100/seed0") listed = c.at("state").get<std::string>().rfind("failed: ", 0) == 0;
    REQUIRE(listed);
    fs::remove_all(dir);
}

TEST_CASE("benz grid runs: a setting audited with another attack is listed, not mixed into the robust column",
          "[benz-grid-run]") {
    const fs::path dir = fresh_dir("benz_grid_other_attack");
    const fs::path grid = write_grid(dir, R"(, {"name": "nat_pgd", "flags": "--method natural --final-attacks pgd20"})");
    for (const std::string cell : {"nat/seed0", "nat_pgd/seed0"}) {
        const Output o = run_experiment("benz_universality", args(grid, dir) + " --job " + cell);
        INFO(o.text);
        REQUIRE(o.code == 0);
    }
    REQUIRE(run_experiment("benz_universality", args(grid, dir) + " --summary").code == cw::study::kIncompleteExit);
    const nlohmann::json j = summary_json(dir);
    REQUIRE(j.at("attack") == "fgsm");   // the first finished cell's
    REQUIRE(j.at("finished_cells") == 1);
    std::string state;
    for (const auto& c : j.at("unfinished_cells"))
        if (c.at("cell") == "nat_pgd/seed0") state = c.at("state").get<std::string>();
    REQUIRE(state == "failed: its results.json has no fgsm evaluation");
    fs::remove_all(dir);
}

TEST_CASE("benz grid runs: --help, --print-grid, --list-jobs, --seeds and --slurm of the grids", "[benz-grid-run]") {
    const Output help = run_experiment("benz_universality", "--help");
    REQUIRE(help.code == 0);
    for (const std::string& flag : expected_help_flags())
        if (flag != "--methods") CHECK(help.text.find(flag) != std::string::npos);   // a grid sets methods per setting
    for (const std::string flag : {"--grid", "--print-grid", "--list-jobs", "--job", "--summary", "--slurm", "--seeds"})
        CHECK(help.text.find(flag) != std::string::npos);
    CHECK(help.text.find("--list-cells") == std::string::npos);   // one mechanism: the study's flags replaced them
    CHECK(help.text.find("--cell ") == std::string::npos);
    const Output quick = run_experiment("benz_universality", "--quick --list-jobs", "2>/dev/null");
    REQUIRE(quick.code == 0);
    REQUIRE(line_count(quick.text) == 36);   // job ids only (the --quick line is on stderr): `| parallel` reads them
    REQUIRE(quick.text.rfind("mnist-small_cnn-natural/seed0\nmnist-small_cnn-pgd_at/seed0\n", 0) == 0);
    const Output printed = run_experiment("benz_universality", "--grid quick --print-grid", "2>/dev/null");
    REQUIRE(printed.code == 0);
    REQUIRE(nlohmann::json::parse(printed.text).at("settings").size() == 12);
    const Output both = run_experiment("benz_universality", "--grid quick --print-grid --job 0", "2>&1 >/dev/null");
    REQUIRE(both.code == 1);
    REQUIRE(both.text ==
            "benz_universality: --print-grid: give it alone (not with --list-jobs, --job, --summary, --slurm)\n");

    // --seeds replaces the grid's seeds; --slurm writes one array for the cells (they need nothing).
    const fs::path dir = fresh_dir("benz_grid_slurm");
    const fs::path grid = write_grid(dir);
    const Output seeds = run_experiment("benz_universality", args(grid, dir) + " --seeds 7 --list-jobs", "2>/dev/null");
    REQUIRE(seeds.code == 0);
    REQUIRE(seeds.text == "nat/seed7\nat/seed7\n");
    REQUIRE(run_experiment("benz_universality", args(grid, dir) + " --slurm --slurm-gpus 0").code == 0);
    CHECK(read_text(dir / "runs/slurm/level0.jobs") == "nat/seed0\nat/seed0\nnat/seed1\nat/seed1\n");
    CHECK(!fs::exists(dir / "runs/slurm/level1.jobs"));
    const std::string l0 = read_text(dir / "runs/slurm/level0.sbatch");
    CHECK(l0.find("#SBATCH --array=0-3\n") != std::string::npos);
    CHECK(l0.find(" --grid " + grid.string() + " ") != std::string::npos);
    CHECK(read_text(dir / "runs/slurm/summary.sbatch").find(" --summary\n") != std::string::npos);
    fs::remove_all(dir);
}
