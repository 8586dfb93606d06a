// experiments/xu_preliminary end to end on the synthetic set (tiny: LeNet-5, 300 images, one epoch): three arms
// with contract results.json at both checkpoints, the second-radius pass at 4/255 on the same images, the Table-3
// and Figure-1 tables agreeing with the results, the study's summary.md, and --resume redoing nothing.
#include <catch2/catch.hpp>

#include <sstream>

#include "util/csv.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

namespace {
const char* kTinyXu =
    "--dataset synthetic --arch lenet5 --train-n 300 --eval-n 60 --epoch-eval-n 30 --epochs 1 --attack-steps 2 "
    "--eval-steps 2 --batch-size 50 --optimizer adam --lr 0.003 --wd 0 --device cpu --seed 1";
}

TEST_CASE("xu_preliminary: natural, PGD-AT and TRADES per class at two radii on the synthetic set", "[experiments]") {
    const fs::path out = fresh_dir("cw_xu_test");
    const Output o = run_experiment("xu_preliminary", std::string(kTinyXu) + " --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    for (const std::string arm : {"natural", "pgd_at", "trades"}) {
        INFO(arm);
        for (const std::string ckpt : {"last", "best_robust"}) {
            const nlohmann::json at8 = contract_results(out / arm / ("eval_" + ckpt) / "results.json");
            const nlohmann::json at4 = contract_results(out / arm / ("eval_" + ckpt + "_eps4") / "results.json");
            CHECK(at8.at("method") == arm);
            CHECK(at4.at("method") == arm);
            CHECK(at4.at("num_examples") == 60);          // the job's test images, not the whole split
            CHECK(at4.at("dataset") == "synthetic");
            const auto* pgd8 = cw::report::find_evaluation(at8, "pgd20");
            const auto* pgd4 = cw::report::find_evaluation(at4, "pgd20");
            REQUIRE(pgd8);
            REQUIRE(pgd4);
            CHECK(pgd8->at("attack").at("eps").get<double>() == Approx(8.0 / 255));
            CHECK(pgd4->at("attack").at("eps").get<double>() == Approx(4.0 / 255));
            // The same images and the same model: the clean pass agrees exactly.
            CHECK(at4.at("evaluations")[0].at("confusion") == at8.at("evaluations")[0].at("confusion"));
        }
    }
    const std::string summary = read_text(out / "summary.md");
    for (const char* row : {"| natural |", "| pgd_at |", "| trades |"}) CHECK(summary.find(row) != std::string::npos);
    CHECK(summary.find("pgd20 worst") != std::string::npos);

    const std::string table = read_text(out / "xu_table.md");
    CHECK(table.find("| evaluation | average | worst class | best class | spread |") != std::string::npos);
    CHECK(table.find("| pgd_at PGD-20 4/255 |") != std::string::npos);
    CHECK(table.find("| brown square |") != std::string::npos);
    CHECK(o.text.find("## Every class (Figure 1)") != std::string::npos);   // printed as well
    // per_class.csv: a column per arm and evaluation, its values those of the results.
    const cw::util::CsvTable csv = cw::util::parse_csv(read_text(out / "per_class.csv"), "per_class.csv");
    REQUIRE(csv.header.size() == 1 + 9);
    REQUIRE(csv.rows.size() == 10);
    const int col = csv.column("trades PGD-20 4/255");
    REQUIRE(col > 0);
    const auto want = cw::report::per_class_values(
        *cw::report::find_evaluation(contract_results(out / "trades/eval_last_eps4/results.json"), "pgd20"),
        "per_class_accuracy");
    for (size_t k = 0; k < 10; ++k) CHECK(std::stod(csv.rows[k][col]) == Approx(want[k]).margin(1e-6));

    // --resume: every arm and every second-radius evaluation finished, nothing runs again.
    const Output again = run_experiment("xu_preliminary", std::string(kTinyXu) + " --resume --out " + out.string());
    INFO(again.text);
    REQUIRE(again.code == 0);
    CHECK(again.text.find("trades finished before; skipped") != std::string::npos);
    CHECK(again.text.find("eval_best_robust_eps4/results.json exists; skipped") != std::string::npos);
    CHECK(again.text.find("epoch 1/") == std::string::npos);
    CHECK(read_text(out / "xu_table.md") == table);
    fs::remove_all(out);
}
