// The grid of benz_universality (study/grid.h, study/grid_summary.h): parsing a grid, bad configs as one line that
// names the setting and the flag, cell ids and names, the order flags are applied in, and the ranking agreement and
// seed noise floor against a hand computation. No training here (tests/test_benz_grid_runs.cpp runs cells).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "study/grid.h"
#include "study/grid_study.h"
#include "study/grid_summary.h"
#include "study/job_run.h"

using namespace cw;

namespace {
nlohmann::json two_by_two() {
    return nlohmann::json::parse(R"({"title": "t", "seeds": [0, 5],
        "base": "--dataset synthetic --arch lenet5 --lr 0.1 --epochs 2",
        "settings": [{"name": "nat", "flags": "--method natural"},
                     {"name": "at", "flags": ["--method pgd_at", "--lr", "0.2"]}]})");
}
std::string error_of(const nlohmann::json& j) {
    try {
        study::grid_from_json(j, "g.json");
    } catch (const std::exception& e) {
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST_CASE("benz grid: settings × seeds, seed-major cell ids and names", "[benz-grid]") {
    const study::Grid g = study::grid_from_json(two_by_two(), "g.json");
    REQUIRE(g.settings.size() == 2);
    REQUIRE(g.seeds == std::vector<uint64_t>{0, 5});
    REQUIRE(g.settings[1].flags == std::vector<std::string>{"--method", "pgd_at", "--lr", "0.2"});
    const auto cells = study::grid_cells(g);
    REQUIRE(cells.size() == 4);
    // Seed-major: every setting's first seed comes before any second seed.
    REQUIRE(cells[1].name == "at/seed0");
    REQUIRE(cells[2].name == "nat/seed5");
    REQUIRE(cells[3].setting == 1);
    REQUIRE(cells[3].seed == 1);
    // The JSON printed by --print-grid reads back to the same grid.
    const study::Grid back = study::grid_from_json(study::grid_to_json(g), "printed");
    REQUIRE(back.settings[1].flags == g.settings[1].flags);
    REQUIRE(back.base_flags == g.base_flags);
}

TEST_CASE("benz grid: flags apply in order base, setting, command line; the seed is the cell's", "[benz-grid]") {
    const study::Grid g = study::grid_from_json(two_by_two(), "g.json");
    train::JobConfig defaults;
    defaults.common.seed = 100;   // --seed offsets the grid's seeds
    const auto cells = study::grid_cells(g);
    const train::JobConfig nat = study::cell_job(g, cells[0], defaults);
    REQUIRE(nat.method == "natural");
    REQUIRE(nat.trainer.recipe.lr == Approx(0.1));
    REQUIRE(nat.common.epochs == 2);
    REQUIRE(nat.data.dataset == "synthetic");
    REQUIRE(nat.common.seed == 100);
    const train::JobConfig at = study::cell_job(g, cells[3], defaults, {"--epochs", "7"});
    REQUIRE(at.method == "pgd_at");
    REQUIRE(at.trainer.recipe.lr == Approx(0.2));   // the setting's flag wins over the base
    REQUIRE(at.common.epochs == 7);                 // the command line wins over both
    REQUIRE(at.common.seed == 105);
    REQUIRE(study::cell_job(g, cells[1], defaults, {"--lr", "0.3"}).trainer.recipe.lr == Approx(0.3));
    REQUIRE(study::flags_without_method(g.settings[1]) == "--lr 0.2");
}

TEST_CASE("benz grid: a grid is a study: its cells are the jobs, in cell order, each with the cell's own job",
          "[benz-grid]") {
    const study::Grid g = study::grid_from_json(two_by_two(), "g.json");
    train::JobConfig defaults;
    defaults.common.seed = 100;
    defaults.common.out = "o";
    std::string seeds;
    const study::Study s = study::grid_study(g, defaults, {"--epochs", "3"}, "g.json", seeds);
    REQUIRE(seeds == "0,5");   // the grid's seeds become the study's --seeds
    REQUIRE(s.arms.size() == 2);
    CHECK(s.keep_going);
    REQUIRE(s.summary);
    const auto jobs = study::study_jobs(s, "o", study::parse_seeds(seeds));
    const auto cells = study::grid_cells(g);
    REQUIRE(jobs.size() == cells.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
        INFO(cells[i].name);
        CHECK(jobs[i].id == cells[i].name);   // "at/seed5": the cell's name and folder
        CHECK(jobs[i].dir == (std::filesystem::path("o") / cells[i].name).string());
        CHECK(jobs[i].level == 0);
        // The job trains what cell_job says the cell is — the seed the cell's (--seed + the grid's seed), not the
        // setting's first.
        cli::CommonFlags common = defaults.common;
        const train::JobConfig job = study::job_arm(s, jobs[i], jobs, common).job;
        const train::JobConfig cell = study::cell_job(g, cells[i], defaults, {"--epochs", "3"});
        CHECK(job.common.seed == cell.common.seed);
        CHECK(job.method == cell.method);
        CHECK(job.trainer.recipe.lr == cell.trainer.recipe.lr);
        CHECK(job.common.epochs == 3);
    }
    CHECK(study::job_arm(s, jobs[3], jobs, defaults.common).job.common.seed == 105);
    // --seeds replaces the grid's seeds.
    CHECK(study::with_seeds(g, "7,2").seeds == std::vector<uint64_t>{7, 2});
    CHECK(study::with_seeds(g, "").seeds == g.seeds);
    REQUIRE_THROWS_WITH(study::with_seeds(g, "1,x"), Catch::StartsWith("--seeds: 'x'"));
}

TEST_CASE("benz grid: a bad config is one line naming the grid, the setting and the flag", "[benz-grid]") {
    auto with_flags = [](const std::string& flags) {
        nlohmann::json j = two_by_two();
        j["settings"][1]["flags"] = flags;
        return error_of(j);
    };
    const std::string unknown = with_flags("--method pgd_at --lrr 0.1");
    CHECK(unknown.rfind("grid 'g.json': setting 'at': ", 0) == 0);
    CHECK(unknown.find("--lrr") != std::string::npos);
    const std::string bad_value = with_flags("--lr abc");
    CHECK(bad_value.rfind("grid 'g.json': setting 'at': --lr: ", 0) == 0);
    CHECK(with_flags("--method nope") == "grid 'g.json': setting 'at': --method: unknown method 'nope'");
    CHECK(with_flags("--arch vgg99") == "grid 'g.json': setting 'at': --arch: unknown architecture 'vgg99'");
    CHECK(with_flags("--seed 3").find("--seed") != std::string::npos);   // the grid owns the seeds
    for (const std::string& e : {unknown, bad_value}) CHECK(e.find('\n') == std::string::npos);

    nlohmann::json j = two_by_two();
    j["settings"][1]["name"] = "nat";
    CHECK(error_of(j) == "grid 'g.json': setting 'nat': the name is used twice");
    j["settings"][1]["name"] = "a/b";
    CHECK(error_of(j) == "grid 'g.json': setting 'a/b': a name is a folder name: letters, digits, '.', '_', '+', '-'");
    j = two_by_two();
    j["seeds"] = {1, 1};
    CHECK(error_of(j) == "grid 'g.json': seed 1 is listed twice");
    j["seeds"] = {-1};
    CHECK(error_of(j) == "grid 'g.json': seed -1 is not a whole number ≥ 0");
    j["seeds"] = nlohmann::json::array();
    CHECK(error_of(j) == "grid 'g.json': 'seeds' must be a non-empty list of whole numbers");
    j = two_by_two();
    j["setings"] = 1;
    CHECK(error_of(j) == "grid 'g.json': unknown key 'setings' (known: title, seeds, base, settings)");
    j = two_by_two();
    j["base"] = "--epochs 0";
    CHECK(error_of(j).rfind("grid 'g.json': setting 'nat': --epochs: ", 0) == 0);
    CHECK_THROWS_WITH(study::load_grid("/nonexistent/g.json"),
                      "--grid: '/nonexistent/g.json' is neither paper, quick, cpu nor a JSON file");
}

TEST_CASE("benz grid: the built-in grids parse, and paper covers Benz §3.1's axes", "[benz-grid]") {
    for (const std::string name : {"paper", "quick", "cpu"}) {
        const study::Grid g = study::load_grid(name);
        INFO(name);
        const study::Grid checked = study::grid_from_json(study::grid_to_json(g), name);   // every flag valid
        REQUIRE(checked.settings.size() == g.settings.size());
        REQUIRE(g.seeds.size() == 3);
    }
    const study::Grid paper = study::paper_grid();
    auto has = [&](const std::string& name) {
        for (const auto& s : paper.settings)
            if (s.name == name) return true;
        return false;
    };
    for (const std::string n : {"svhn-resnet18-pgd_at", "tinyimagenet-resnet18-natural", "gtsrb32-resnet18-pgd_at",
                                "cifar10-densenet169-pgd_at", "cifar10-googlenet-natural", "cifar10-resnet18-adam-pgd_at",
                                "cifar10-resnet18-cyclic-natural", "cifar10-resnet18-wd0-pgd_at"})
        CHECK(has(n));
    REQUIRE(study::grid_cells(study::quick_grid()).size() == 36);
    // The cpu grid: CIFAR-10 at the CPU recipe, two architectures x natural/PGD-AT x 3 seeds, the recipe's flags as
    // its base (cifar10_fairtat --cpu-scale's), each cell's --arch last so it wins over the recipe's.
    const study::Grid cpu = study::cpu_grid();
    REQUIRE(study::grid_cells(cpu).size() == 12);
    const std::string base = [&] {
        std::string b;
        for (const auto& f : cpu.base_flags) b += (b.empty() ? "" : " ") + f;
        return b;
    }();
    CHECK(base.find("--dataset cifar10 --arch wrn16_1 --eps 8/255 --batch-size 128 --attack-steps 2 --optimizer sgd "
                    "--lr 0.2 --schedule cyclic --wd 5e-4 --epochs 9 --val-split first:100") == 0);
    CHECK(cpu.settings[2].name == "cifar10-wrn10_2-natural");
}

TEST_CASE("benz grid: Spearman matrix and seed noise floor match a hand computation", "[benz-grid]") {
    // Four classes, no ties, so ρ = 1 − Σd² / 10 (n = 4: 6 / (n(n² − 1)) = 1/10).
    study::SettingRuns a, b, c;
    a.name = "A", b.name = "B", c.name = "C";
    a.clean = {{0.9, 0.8, 0.5, 0.2}, {0.7, 0.9, 0.4, 0.1}};   // ranks 4 3 2 1 and 3 4 2 1
    b.clean = {{0.1, 0.3, 0.6, 0.9}, {0.2, 0.1, 0.8, 0.5}};   // ranks 1 2 3 4 and 2 1 4 3
    c.clean = {{0.1, 0.2, 0.3, 0.4}};                          // one seed: no floor of its own
    const study::Agreement ag = study::ranking_agreement({&a, &b, &c}, /*robust=*/false);
    // A1·A2: d = (1, −1, 0, 0), Σd² = 2 → 0.8.  B1·B2: d = (−1, 1, −1, 1) → 0.6.
    REQUIRE(ag.matrix[0][0] == Approx(0.8));
    REQUIRE(ag.matrix[1][1] == Approx(0.6));
    REQUIRE(std::isnan(ag.matrix[2][2]));
    // A·B: ρ(A1,B1) = −1, ρ(A1,B2) = −0.6, ρ(A2,B1) = 1 − 18/10 = −0.8, ρ(A2,B2) = −0.8: mean −0.8.
    REQUIRE(ag.matrix[0][1] == Approx(-0.8));
    REQUIRE(ag.matrix[1][0] == Approx(-0.8));
    // A·C: C ranks like B1: ρ(A1,C) = −1, ρ(A2,C) = −0.8.
    REQUIRE(ag.matrix[0][2] == Approx(-0.9));
    REQUIRE(ag.floor_pairs == 2);
    REQUIRE(ag.floor_mean == Approx(0.7));
    REQUIRE(ag.floor_min == Approx(0.6));
    // Across: 4 pairs A·B, 2 pairs A·C, 2 pairs B·C (ρ(B1,C) = 1, ρ(B2,C) = 1 − 4/10 = 0.6).
    REQUIRE(ag.across_pairs == 8);
    REQUIRE(ag.across_mean == Approx((-1 - 0.6 - 0.8 - 0.8 - 1 - 0.8 + 1 + 0.6) / 8));
    REQUIRE(ag.across_min == Approx(-1));

    // Discrepancy of A's seed mean (0.8, 0.85, 0.45, 0.15).
    const study::Discrepancy d = study::discrepancy(study::mean_over_runs(a.clean));
    REQUIRE(d.mean == Approx(0.5625));
    REQUIRE(d.spread == Approx(0.7));
    REQUIRE(d.worst == Approx(0.15));
    REQUIRE(d.worst_class == 3);
    REQUIRE(d.sd == Approx(std::sqrt(0.321875 / 4)));
    // A constant vector (every class at 0% robust) has no ranking: its pairs are left out, not counted as 0.
    study::SettingRuns z;
    z.clean = {{0, 0, 0, 0}, {0.1, 0.2, 0.3, 0.4}};
    const study::Agreement none = study::ranking_agreement({&z}, false);
    REQUIRE(none.floor_pairs == 0);
    REQUIRE(std::isnan(none.matrix[0][0]));
}
