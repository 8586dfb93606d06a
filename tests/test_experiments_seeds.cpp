// An experiment run with --seeds makes its own tables once per seed. Its study trains every arm per seed, in
// <out>/<arm>/seed<k>/; the tables the binary makes after the study (a paper's Table 1, its figures) read those folders
// and go to <out>/seed<k>/, linked from the study's summary.md. They looked for <out>/<arm>/ instead, so every binary
// with tables of its own failed after training every seed ("pgd_at/eval_last/results.json: no such file").
#include <catch2/catch.hpp>

#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

namespace {
const char* kTiny = "--dataset synthetic --arch lenet5 --train-n 100 --eval-n 40 --epoch-eval-n 20 --batch-size 50 "
                    "--epochs 1 --attack-steps 2 --eval-steps 2 --device cpu --seeds 0,1 --out ";
}  // namespace

TEST_CASE("experiments with --seeds: frl_tables writes Table 1 per seed from that seed's runs", "[experiments]") {
    const fs::path out = fresh_dir("cw_seeds_frl");
    const Output o = run_experiment("frl_tables", std::string(kTiny) + out.string() +
                                                      " --methods pgd_at,frl_rwrm --finetune-epochs 1 --frl-val-steps 2 "
                                                      "--val-split last:3");
    INFO(o.text);
    REQUIRE(o.code == 0);
    for (const char* seed : {"0", "1"}) {
        INFO("seed " << seed);
        const std::string table = read_text(out / ("seed" + std::string(seed)) / "frl_table.md");
        CHECK(table.rfind("# ", 0) == 0);
        CHECK(table.find("(seed " + std::string(seed) + ")") != std::string::npos);
        // The seed's own runs: its PGD-AT row holds that run's clean error (100 − clean accuracy, in %).
        const nlohmann::json r = contract_results(out / "pgd_at" / ("seed" + std::string(seed)) / "eval_last/results.json");
        const double clean_error = 100 * (1 - r.at("evaluations")[0].at("accuracy").get<double>());
        char cell[32];
        std::snprintf(cell, sizeof cell, "| pgd_at | %.1f |", clean_error);
        CHECK(table.find(cell) != std::string::npos);
        CHECK(fs::exists(out / ("seed" + std::string(seed)) / "max_violation.csv"));
    }
    CHECK_FALSE(fs::exists(out / "frl_table.md"));
    fs::remove_all(out);
}

TEST_CASE("experiments with --seeds: benz_trends writes the trends per seed, linked from the study's summary",
          "[experiments]") {
    const fs::path out = fresh_dir("cw_seeds_trends");
    const Output o = run_experiment("benz_trends", std::string(kTiny) + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    const std::string summary = read_text(out / "summary.md");
    for (const char* seed : {"0", "1"}) {
        const std::string k = seed;
        CHECK(read_text(out / ("seed" + k) / "trends.md").find("(seed " + k + ")") != std::string::npos);
        CHECK(summary.find("[trends.md](seed" + k + "/trends.md)") != std::string::npos);
    }
    fs::remove_all(out);
}
