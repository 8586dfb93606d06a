// experiments/fairtat_cfp end to end on the synthetic set: PGD-AT and TRADES trained and attacked (a cut-down
// attack list), the CFP of every evaluation in contract results.json, the top-3 table and cfp.csv agreeing with
// them; then --weights auditing those checkpoints without training, the architecture from their metadata.
#include <catch2/catch.hpp>

#include "protocols/cfp_analysis.h"
#include "util/csv.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

namespace {
// Every CFP value of cfp.csv equals the results.json's, and every row of cfp_table.md names the top class.
void check_cfp_outputs(const fs::path& out, const std::vector<std::pair<std::string, fs::path>>& models,
                       size_t evaluations) {
    const cw::util::CsvTable csv = cw::util::parse_csv(read_text(out / "cfp.csv"), "cfp.csv");
    REQUIRE(csv.header == std::vector<std::string>{"model", "evaluation", "class", "cfp", "cfp_broken"});
    CHECK(csv.rows.size() == models.size() * evaluations * 10);
    const std::string table = read_text(out / "cfp_table.md");
    size_t row = 0;
    for (const auto& [name, file] : models) {
        INFO(name);
        const nlohmann::json r = contract_results(file);
        REQUIRE(r.at("evaluations").size() == evaluations);
        CHECK(table.find("### " + name + "\n") != std::string::npos);
        const cw::eval::EvalRecords records =
            cw::eval::parse_records_csv(read_text(fs::path(file).parent_path() / "records.csv"));
        const cw::protocols::ModelCfp m = cw::protocols::model_cfp(name, r, &records);
        for (size_t e = 0; e < evaluations; ++e) {
            const auto top = cw::protocols::top_classes(m.cfp[e], 3);
            if (!top.empty())
                CHECK(table.find("| " + m.evaluations[e] + " | ") != std::string::npos);
            for (size_t k = 0; k < 10; ++k, ++row) {
                CHECK(csv.rows[row][0] == name);
                CHECK(csv.rows[row][1] == m.evaluations[e]);
                CHECK(std::stod(csv.rows[row][3]) == Approx(m.cfp[e][k]).margin(1e-6));
                if (e == 0) CHECK(csv.rows[row][4].empty());   // clean: no attack broke anything
                else CHECK(std::stod(csv.rows[row][4]) == Approx(m.broken_cfp[e][k]).margin(1e-6));
            }
        }
    }
    CHECK(table.find("Agreement across the " + std::to_string(evaluations - 1) + " attacks") != std::string::npos);
    CHECK(table.find("Only the samples each attack broke") != std::string::npos);
}
}  // namespace

TEST_CASE("fairtat_cfp: trained PGD-AT and TRADES, CFP per attack, then the same checkpoints via --weights",
          "[experiments]") {
    const fs::path out = fresh_dir("cw_cfp_test");
    const Output o = run_experiment(
        "fairtat_cfp",
        "--dataset synthetic --arch lenet5 --train-n 400 --eval-n 60 --epoch-eval-n 30 --epochs 1 --attack-steps 2 "
        "--eval-steps 2 --batch-size 40 --optimizer adam --lr 0.003 --wd 0 --device cpu --seed 3 "
        "--final-attacks pgd20,cw20,apgd-ce,square100 --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    check_cfp_outputs(out, {{"pgd_at", out / "pgd_at/eval_last/results.json"}, {"trades", out / "trades/eval_last/results.json"}},
                      5);
    const std::string summary = read_text(out / "summary.md");
    CHECK(summary.find("| pgd_at |") != std::string::npos);
    CHECK(summary.find("| trades |") != std::string::npos);
    CHECK(o.text.find("Which classes absorb the errors") != std::string::npos);

    // --weights: no training; each checkpoint audited into <out>/<parent>_<stem>/.
    const fs::path audited = fresh_dir("cw_cfp_weights_test");
    const Output w = run_experiment("fairtat_cfp", "--weights " + (out / "pgd_at/last.safetensors").string() +
                                                       " --weights " + (out / "trades/last.safetensors").string() +
                                                       " --eval-n 40 --final-attacks pgd20,apgd-t --device cpu --out " +
                                                       audited.string());
    INFO(w.text);
    REQUIRE(w.code == 0);
    CHECK(w.text.find("epoch 1/") == std::string::npos);
    check_cfp_outputs(audited, {{"pgd_at_last", audited / "pgd_at_last/results.json"},
                                {"trades_last", audited / "trades_last/results.json"}},
                      3);
    const nlohmann::json r = contract_results(audited / "trades_last/results.json");
    CHECK(r.at("method") == "trades");        // from the checkpoint's metadata
    CHECK(r.at("dataset") == "synthetic");
    CHECK(r.at("model").at("arch") == "lenet5");
    CHECK(r.at("num_examples") == 40);
    CHECK(read_text(audited / "summary.md").find("| trades_last |") != std::string::npos);
    fs::remove_all(out);
    fs::remove_all(audited);
}
