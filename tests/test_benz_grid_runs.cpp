// benz_universality running real cells on the synthetic set (no files needed, about a second a cell): two cells as
// separate processes through GNU parallel, then --summary gathers them and lists the rest; a half-done grid
// resumed by a full run that does not retrain the finished cells; a cell whose dataset is missing fails with the
// loader's line and the summary goes on without it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "tests/skip.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

namespace {

// 2 settings × 2 seeds, 4 cells of about a second each.
fs::path write_grid(const fs::path& dir, const std::string& extra_setting = "") {
    fs::create_directories(dir);
    const fs::path file = dir / "grid.json";
    std::ofstream(file) << R"({"title": "test grid", "seeds": [0, 1],
      "base": "--dataset synthetic --arch lenet5 --train-n 200 --eval-n 100 --epoch-eval-n 50 --batch-size 50 --epochs 1 --attack-steps 2 --eval-steps 2 --final-attacks fgsm --final-checkpoints last --optimizer adam --lr 0.002",
      "settings": [{"name": "nat", "flags": "--method natural"}, {"name": "at", "flags": "--method pgd_at"})"
                        << extra_setting << "]}\n";
    return file;
}

std::string args(const fs::path& grid, const fs::path& out) {
    return "--device cpu --grid " + grid.string() + " --out " + (out / "runs").string();
}

nlohmann::json summary_json(const fs::path& out) {
    return nlohmann::json::parse(read_text(out / "runs" / "grid_summary.json"));
}

}  // namespace

TEST_CASE("benz grid runs: two cells through GNU parallel, then --summary gathers what is finished", "[benz-grid-run]") {
    if (cw_test::run_shell("command -v parallel >/dev/null 2>&1").code != 0)
        CW_SKIP("GNU parallel is not installed (Debian: apt-get install parallel; scripts/setup_debian.sh)");
    const fs::path dir = fresh_dir("benz_grid_parallel");
    const fs::path grid = write_grid(dir);
    const Output list = run_experiment("benz_universality", args(grid, dir) + " --list-cells", "2>/dev/null");
    REQUIRE(list.code == 0);
    REQUIRE(list.text == "0\n1\n2\n3\n");
    // Cells 0 and 3 (nat/seed0, at/seed1), one process each, one thread each, as the docs say.
    const std::string binary = (repo_root() / "experiments" / "benz_universality").string();
    const Output par = cw_test::run_shell("printf '0\\n3\\n' | CLASSWISE_GNUPLOT=/nonexistent OMP_NUM_THREADS=1 "
                                          "parallel -j2 --halt now,fail=1 " + binary + " " + args(grid, dir) +
                                          " --cell {} > " + (dir / "parallel.log").string() + " 2>&1");
    INFO(read_text(dir / "parallel.log"));
    REQUIRE(par.code == 0);
    REQUIRE(fs::exists(dir / "runs" / "nat" / "seed0" / "eval_last" / "results.json"));
    REQUIRE(fs::exists(dir / "runs" / "at" / "seed1" / "eval_last" / "results.json"));
    REQUIRE_FALSE(fs::exists(dir / "runs" / "at" / "seed0"));

    const Output sum = run_experiment("benz_universality", args(grid, dir) + " --summary");
    INFO(sum.text);
    REQUIRE(sum.code == 0);
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
    for (const std::string cell : {"0", "at/seed0"}) {   // the first two cells, by index and by name
        const Output o = run_experiment("benz_universality", args(grid, dir) + " --cell " + cell);
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
    REQUIRE(again.text.find("(natural) into") == std::string::npos);   // no "== cell i: <name> (<method>) into <dir>"
    REQUIRE(again.text.find("(pgd_at) into") == std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("benz grid runs: a cell without its dataset fails in one line; the summary lists it and goes on",
          "[benz-grid-run]") {
    const fs::path dir = fresh_dir("benz_grid_missing");
    const fs::path grid = write_grid(dir, R"(, {"name": "c100", "flags": "--dataset cifar100 --method natural"})");
    fs::create_directories(dir / "empty_data");
    const Output o = run_experiment("benz_universality", args(grid, dir) + " --data-dir " +
                                                             (dir / "empty_data").string() + " --cell c100/seed0",
                                    "2>&1 >/dev/null");
    REQUIRE(o.code == 1);
    REQUIRE(line_count(o.text) == 1);
    REQUIRE(o.text.find("benz_universality: ") == 0);
    REQUIRE(o.text.find("cifar") != std::string::npos);
    const fs::path error_file = dir / "runs" / "c100" / "seed0" / "grid_error.txt";
    REQUIRE(fs::exists(error_file));
    REQUIRE(run_experiment("benz_universality", args(grid, dir) + " --data-dir " + (dir / "empty_data").string() +
                                                    " --cell nat/seed0").code == 0);
    const Output sum = run_experiment("benz_universality", args(grid, dir) + " --summary");
    REQUIRE(sum.code == 0);
    const nlohmann::json j = summary_json(dir);
    REQUIRE(j.at("finished_cells") == 1);
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
        const Output o = run_experiment("benz_universality", args(grid, dir) + " --cell " + cell);
        INFO(o.text);
        REQUIRE(o.code == 0);
    }
    REQUIRE(run_experiment("benz_universality", args(grid, dir) + " --summary").code == 0);
    const nlohmann::json j = summary_json(dir);
    REQUIRE(j.at("attack") == "fgsm");   // the first finished cell's
    REQUIRE(j.at("finished_cells") == 1);
    std::string state;
    for (const auto& c : j.at("unfinished_cells"))
        if (c.at("cell") == "nat_pgd/seed0") state = c.at("state").get<std::string>();
    REQUIRE(state == "failed: its results.json has no fgsm evaluation");
    fs::remove_all(dir);
}

TEST_CASE("benz grid runs: --help, --print-grid and --list-cells of the built-in grids", "[benz-grid-run]") {
    const Output help = run_experiment("benz_universality", "--help");
    REQUIRE(help.code == 0);
    for (const std::string& flag : expected_help_flags())
        if (flag != "--methods") CHECK(help.text.find(flag) != std::string::npos);   // a grid sets methods per setting
    for (const std::string flag : {"--grid", "--print-grid", "--list-cells", "--cell", "--summary"})
        CHECK(help.text.find(flag) != std::string::npos);
    const Output quick = run_experiment("benz_universality", "--quick --list-cells", "2>/dev/null");
    REQUIRE(quick.code == 0);
    REQUIRE(line_count(quick.text) == 36);   // cell ids only (the --quick line is on stderr): `| parallel` reads them
    const Output printed = run_experiment("benz_universality", "--grid quick --print-grid", "2>/dev/null");
    REQUIRE(printed.code == 0);
    REQUIRE(nlohmann::json::parse(printed.text).at("settings").size() == 12);
    const Output both = run_experiment("benz_universality", "--grid quick --summary --cell 0", "2>&1 >/dev/null");
    REQUIRE(both.code == 1);
    REQUIRE(both.text == "benz_universality: --print-grid, --list-cells, --cell and --summary: give one of them\n");
}
