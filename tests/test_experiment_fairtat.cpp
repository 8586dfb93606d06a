// experiments/cifar10_fairtat's protocol on the tiny synthetic dataset, run as the binary is run: its arms train,
// FRL fine-tunes the PGD-AT arm's checkpoint, weight-averaged arms are compared by their averaged model (or, with
// none, by their last one), every results.json keeps the contract, and summary.md lists every arm. Also its
// one-line errors for bad --arms.
#include <catch2/catch.hpp>

#include "tests/test_datasets_fixtures.h"
#include "tests/test_experiments_util.h"
#include "tests/test_nn_util.h"

using namespace cw_experiments_test;

TEST_CASE("cifar10_fairtat: bad --arms are one line naming the flag", "[experiments]") {
    const std::string out = fresh_dir("cw_never").string();   // never written: every case stops at its flags
    Output o = run_experiment("cifar10_fairtat", "--arms nope --out " + out);
    CHECK(o.code == 1);
    CHECK(o.text.find("cifar10_fairtat: --arms: no arm 'nope' (arms: natural, pgd_at,") != std::string::npos);
    o = run_experiment("cifar10_fairtat", "--arms frl --out " + out);
    CHECK(o.code == 1);
    CHECK(o.text == "cifar10_fairtat: --arms: frl, frl_ema and faal_pgd fine-tune the pgd_at arm's best checkpoint: list pgd_at too\n");
    o = run_experiment("cifar10_fairtat", "--arms pgd_at,faal --out " + out);
    CHECK(o.text == "cifar10_fairtat: --arms: faal fine-tunes the trades arm's best checkpoint: list trades too\n");
}

TEST_CASE("cifar10_fairtat: CIFAR-100 without its files is one line saying where it looked", "[experiments]") {
    const Output o = run_experiment("cifar10_fairtat", "--quick --dataset cifar100 --data-dir /nonexistent/cw_data "
                                                       "--arms natural --out " + fresh_dir("cw_never").string());
    INFO(o.text);
    CHECK(o.code == 1);
    const std::string last = o.text.substr(o.text.rfind('\n', o.text.size() - 2) + 1);
    CHECK(last.rfind("cifar10_fairtat: ", 0) == 0);
    CHECK(last.find("/nonexistent/cw_data") != std::string::npos);
    CHECK(last.find("make data DATASET=cifar100") != std::string::npos);
}

TEST_CASE("cifar10_fairtat: Table 1's protocol on synthetic data", "[experiments]") {
    cw_nn_test::ScratchDir dir;
    const fs::path out = dir.path / "t1";
    const Output o = run_experiment("cifar10_fairtat",
                         "--quick --arch lenet5 --dataset synthetic --train-n 100 --val-split first:2 --eval-n 20 --epoch-eval-n 10"
                         " --epochs 2 --batch-size 50 --attack-steps 2 --eval-steps 2 --ema-start 0 --device cpu"
                         " --arms pgd_at,pgd_at_ema,cfa_at,frl,fair_tat --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    for (const char* arm : {"pgd_at", "pgd_at_ema", "cfa_at", "frl", "fair_tat"})
        contract_results(out / arm / "eval_last/results.json");
    contract_results(out / "pgd_at_ema/eval_ema_last/results.json");
    // FRL fine-tuned the PGD-AT arm's checkpoint, for a fifth of the epochs (at least one)
    const nlohmann::json frl_job = nlohmann::json::parse(cw::util::read_file_text((out / "frl/job.json").string()));
    REQUIRE(frl_job.at("init") == (out / "pgd_at/best_robust.safetensors").string());
    REQUIRE(frl_job.at("epochs") == 1);
    const std::string md = cw::util::read_file_text((out / "summary.md").string());
    for (const char* arm : {"| pgd_at |", "| pgd_at_ema |", "| cfa_at |", "| frl |", "| fair_tat |"})
        REQUIRE(md.find(arm) != std::string::npos);
    // the EMA arm is compared by its averaged model
    const std::string page = cw::util::read_file_text((out / "compare.html").string());
    REQUIRE(page.find("pgd_at_ema/eval_ema_last/results.json") != std::string::npos);
    REQUIRE(o.text.find("note: pgd_at_ema has no averaged model") == std::string::npos);
}

TEST_CASE("cifar10_fairtat: --arms faal fine-tunes the trades arm for 2 epochs (beyond Table 1)", "[experiments]") {
    cw_nn_test::ScratchDir dir;
    const fs::path out = dir.path / "faal";
    const Output o = run_experiment("cifar10_fairtat",
                         "--quick --arch lenet5 --dataset synthetic --train-n 100 --val-split first:2 --eval-n 20 --epoch-eval-n 10"
                         " --epochs 1 --batch-size 50 --attack-steps 2 --eval-steps 2 --device cpu --arms trades,faal"
                         " --out " +
                         out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    contract_results(out / "faal/eval_last/results.json");
    const nlohmann::json job = nlohmann::json::parse(cw::util::read_file_text((out / "faal/job.json").string()));
    REQUIRE(job.at("init") == (out / "trades/best_robust.safetensors").string());
    REQUIRE(job.at("method").get<std::string>().rfind("faal: ", 0) == 0);
    REQUIRE(job.at("recipe").get<std::string>().find("lr 0.01") != std::string::npos);
    REQUIRE(job.at("epochs") == 2);
    REQUIRE(cw::util::read_file_text((out / "summary.md").string()).find("| faal |") != std::string::npos);
    // the FAAL run's history has its class weights
    REQUIRE(cw::util::read_file_text((out / "faal/history.csv").string()).find("2,state_weight,") != std::string::npos);
}

TEST_CASE("cifar10_fairtat: the CIFAR-100 path on a fixture in the official binary layout", "[experiments]") {
    // CIFAR-100 cannot be shipped here: 300 generated training records (3 per class) and 100 test records in
    // cifar-100-binary/{train,test}.bin, coarse label = fine / 5, go through the binary's --dataset cifar100 path.
    cw_nn_test::ScratchDir dir;
    const fs::path data = dir.path / "data";
    fs::create_directories(data / "cifar-100-binary");
    auto records = [](int per_class, int64_t first_image) {
        std::vector<int> coarse, fine;
        for (int i = 0; i < per_class; ++i)
            for (int c = 0; c < 100; ++c) {
                fine.push_back(c);
                coarse.push_back(c / 5);
            }
        return cw_fixtures::make_cifar_records({coarse, fine}, first_image);
    };
    cw_fixtures::write_file((data / "cifar-100-binary/train.bin").string(), records(3, 0));
    cw_fixtures::write_file((data / "cifar-100-binary/test.bin").string(), records(1, 1000));
    const fs::path out = dir.path / "c100";
    const Output o = run_experiment("cifar10_fairtat",
                                    "--quick --arch lenet5 --dataset cifar100 --data-dir " + data.string() +
                                        " --val-split first:1 --train-n 100 --eval-n 100 --epoch-eval-n 20 --epochs 1"
                                        " --batch-size 50 --attack-steps 2 --eval-steps 2 --device cpu"
                                        " --arms natural,fair_tat --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    for (const char* arm : {"natural", "fair_tat"}) {
        const nlohmann::json j = contract_results(out / arm / "eval_last/results.json");
        REQUIRE(j.at("classes").size() == 100);
        const auto& clean = j.at("evaluations").at(0);
        REQUIRE(clean.at("per_class_accuracy").size() == 100);
        // the superclass view comes with CIFAR-100: 20 superclasses, a 20 x 20 confusion
        REQUIRE(clean.contains("superclass_confusion"));
        REQUIRE(clean.at("superclass_confusion").size() == 20);
    }
    REQUIRE(cw::util::read_file_text((out / "summary.md").string()).find("| fair_tat |") != std::string::npos);
}

TEST_CASE("cifar10_fairtat: --cpu-scale runs the CPU recipe's code path (at CI size)", "[experiments]") {
    cw_nn_test::ScratchDir dir;
    const fs::path out = dir.path / "cpu";
    // The preset's arms, model, schedule and FRL fine-tune; only the data's size is overridden (explicit flags win).
    const Output o = run_experiment("cifar10_fairtat",
                                    "--cpu-scale --dataset synthetic --train-n 100 --val-split first:2 --eval-n 20 "
                                    "--epoch-eval-n 10 --epochs 2 --batch-size 50 --eval-steps 2 --device cpu "
                                    "--arms pgd_at,frl --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    CHECK(o.text.find("--cpu-scale preset: --arch wrn16_1") != std::string::npos);
    // Chosen knowingly: the estimate is said and training starts without a question (no terminal, no --yes here).
    CHECK(o.text.find("estimate: one pgd_at step takes") != std::string::npos);
    CHECK(o.text.find("Ways forward") == std::string::npos);
    const auto job = [&](const char* arm) {
        return nlohmann::json::parse(cw::util::read_file_text((out / arm / "job.json").string()));
    };
    const nlohmann::json pgd = job("pgd_at"), frl = job("frl");
    INFO(pgd.dump());
    CHECK(pgd.at("arch") == "wrn16_1");
    CHECK(pgd.at("epochs") == 2);
    CHECK(pgd.at("recipe") == "sgd lr 0.2 momentum 0.9 wd 0.0005, cyclic schedule");
    CHECK(pgd.at("method").get<std::string>().rfind("pgd_at: PGD-2 Linf CE, eps 8/255", 0) == 0);
    // FRL: the preset's fine-tune, 2 epochs at a constant 0.01, from PGD-AT's best checkpoint.
    CHECK(frl.at("epochs") == 2);
    CHECK(frl.at("init") == (out / "pgd_at/best_robust.safetensors").string());
    CHECK(frl.at("recipe") == "sgd lr 0.01 momentum 0.9 wd 0.0005, constant schedule");
    contract_results(out / "pgd_at/eval_last/results.json");
    contract_results(out / "frl/eval_last/results.json");
}

TEST_CASE("cifar10_fairtat: --quick and --cpu-scale together are one line", "[experiments]") {
    const Output o = run_experiment("cifar10_fairtat", "--quick --cpu-scale --out " + fresh_dir("cw_never").string());
    CHECK(o.code == 1);
    CHECK(o.text == "cifar10_fairtat: --quick and --cpu-scale are two presets: give one (see cifar10_fairtat --help)\n");
}
