// experiments/frl_tables end to end on the synthetic set (tiny: LeNet-5, 300 images): PGD-AT, TRADES at two β,
// and the four FRL arms fine-tuned from PGD-AT's best_robust checkpoint; contract results.json for every arm,
// Table 1, and max_violation.csv whose every value is the largest entry of its history.csv row.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "util/csv.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

TEST_CASE("frl_tables: the arms, Table 1 and the per-epoch largest constraint violation on the synthetic set",
          "[experiments]") {
    const fs::path out = fresh_dir("cw_frl_test");
    const Output o = run_experiment(
        "frl_tables",
        "--dataset synthetic --arch lenet5 --train-n 300 --val-split last:10 --eval-n 50 --epoch-eval-n 30 --epochs 1 "
        "--finetune-epochs 2 --attack-steps 2 --eval-steps 2 --frl-val-steps 2 --batch-size 50 --optimizer adam "
        "--lr 0.003 --finetune-lr 0.001 --wd 0 --device cpu --seed 2 --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    const std::vector<std::string> arms = {"pgd_at", "trades_beta1", "trades_beta6", "frl_baseline_rw",
                                           "frl_rw", "frl_rm", "frl_rwrm"};
    for (const std::string& arm : arms) {
        INFO(arm);
        const nlohmann::json r = contract_results(out / arm / "eval_last/results.json");
        CHECK(r.at("num_examples") == 50);
        const nlohmann::json job = nlohmann::json::parse(read_text(out / arm / "job.json"));
        if (arm.rfind("frl_", 0) == 0) {
            // The hot start: PGD-AT's best checkpoint, then FRL's fine-tuning recipe.
            CHECK(job.at("init") == (out / "pgd_at/best_robust.safetensors").string());
            CHECK(job.at("epochs") == 2);
            CHECK(job.at("recipe").get<std::string>().find("lr 0.001") != std::string::npos);
            CHECK(job.at("val_split") == "last:10");
        } else {
            CHECK(job.at("init") == "");
            CHECK(job.at("epochs") == 1);
        }
    }
    CHECK(nlohmann::json::parse(read_text(out / "trades_beta1/job.json")).at("method").get<std::string>().find("beta 1") !=
          std::string::npos);

    const std::string summary = read_text(out / "summary.md");
    for (const std::string& arm : arms) CHECK(summary.find("| " + arm + " |") != std::string::npos);
    const std::string table = read_text(out / "frl_table.md");
    CHECK(table.find("| model | avg std | worst std | avg bdy | worst bdy | avg rob | worst rob |") != std::string::npos);
    for (const std::string& arm : arms) CHECK(table.find("| " + arm + " | ") != std::string::npos);
    CHECK(table.find("### frl_rwrm") != std::string::npos);
    CHECK(o.text.find("max violation bdy") != std::string::npos);   // printed per FRL arm

    // max_violation.csv: per FRL arm, epoch and constraint the largest violation of history.csv's row.
    const cw::util::CsvTable v = cw::util::parse_csv(read_text(out / "max_violation.csv"), "max_violation.csv");
    REQUIRE(v.header == std::vector<std::string>{"run", "epoch", "constraint", "max_violation", "class"});
    std::map<std::string, int> rows_per_run;
    for (const auto& row : v.rows) {
        INFO(row[0] + " epoch " + row[1] + " " + row[2]);
        ++rows_per_run[row[0]];
        CHECK((row[0] == "frl_baseline_rw" ? row[2] == "rob" : (row[2] == "nat" || row[2] == "bdy")));
        const cw::util::CsvTable h = cw::util::parse_csv(read_text(out / row[0] / "history.csv"), "history.csv");
        bool found = false;
        for (const auto& hr : h.rows) {
            if (hr[0] != row[1] || hr[1] != "state_violation_" + row[2]) continue;
            found = true;
            double largest = -INFINITY;
            std::string at;
            for (size_t j = 3; j < hr.size(); ++j)
                if (std::stod(hr[j]) > largest) largest = std::stod(hr[j]), at = h.header[j];
            CHECK(std::stod(row[3]) == Approx(largest).margin(1e-6));
            CHECK(row[4] == at);
        }
        CHECK(found);
    }
    CHECK(rows_per_run["frl_baseline_rw"] == 2);   // rob, epochs 1 and 2
    for (const char* arm : {"frl_rw", "frl_rm", "frl_rwrm"}) CHECK(rows_per_run[arm] == 4);   // nat and bdy, 2 epochs
    CHECK(rows_per_run.count("pgd_at") == 0);
    fs::remove_all(out);
}

TEST_CASE("frl_tables: FRL arms without PGD-AT need a hot start, said in one line", "[experiments]") {
    const Output o = run_experiment("frl_tables", "--dataset synthetic --methods frl_rw --out " + fresh_dir("cw_frl_nohot").string(),
                                    "2>&1 >/dev/null");
    CHECK(o.code == 1);
    CHECK(o.text == "frl_tables: --methods: the FRL arms fine-tune PGD-AT's best_robust checkpoint: keep pgd_at in "
                    "--methods or give --hot-start FILE\n");
}

// A TRADES β must be a positive number, all of it. Seen failing before: "6x" trained β = 6 and "-1" a negative β.
TEST_CASE("frl_tables: a --trades-betas value that is not a positive number is refused in one line", "[experiments]") {
    for (const std::string b : {"6x", "-1", "nan", "0"}) {
        const Output o = run_experiment("frl_tables", "--dataset synthetic --trades-betas '1," + b + "' --list-jobs --out " +
                                                          fresh_dir("cw_frl_betas").string(),
                                        "2>&1 >/dev/null");
        INFO(b);
        CHECK(o.code == 1);
        CHECK(o.text == "frl_tables: --trades-betas: '" + b + "' is not a positive number\n");
    }
}
