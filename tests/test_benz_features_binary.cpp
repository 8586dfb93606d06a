// experiments/benz_features end to end on the synthetic set (its --quick path made tiny: LeNet-5, 200 images, one
// epoch, 40-image feature sets of 10 steps, 2 epochs on each set): the sources, the two feature sets and their
// construction losses, three arms with contract results.json, the tables, --resume redoing nothing, and given
// source weights training none.
#include <catch2/catch.hpp>

#include "nn/safetensors.h"
#include "tests/test_benz_features_flags.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

namespace {
const char* kTiny = kBenzFeaturesTiny;
}

TEST_CASE("benz_features: sources, feature sets, three arms per class on the synthetic set", "[benz_features][experiments]") {
    const fs::path out = fresh_dir("cw_benz_features");
    const Output o = run_experiment("benz_features", std::string(kTiny) + " --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    for (const std::string src : {"natural", "pgd_at"}) CHECK(contract_results(out / "sources" / src / "eval_last/results.json").at("method") == src);
    CHECK(nlohmann::json::parse(read_text(out / "sources/pgd_at/job.json")).at("epochs") == 1);
    for (const std::string arm : {"original", "robust_set", "nonrobust_set"}) {
        INFO(arm);
        const nlohmann::json r = contract_results(out / arm / "eval_last/results.json");
        CHECK(r.at("method") == "natural");
        CHECK(r.at("num_examples") == 40);
        CHECK(cw::report::find_evaluation(r, "pgd20") != nullptr);
        const auto job = nlohmann::json::parse(read_text(out / arm / "job.json"));
        CHECK(job.at("train_images") == 40);   // 4 per class
        CHECK(job.at("epochs") == 2);          // --set-epochs, not the sources' --epochs
        const std::string file = arm == "original" ? "original" : arm == "robust_set" ? "robust" : "nonrobust";
        CHECK(job.at("train_file") == (out / "feature_sets" / file / "set.safetensors").string());
    }
    for (const std::string set : {"robust", "nonrobust"}) {
        INFO(set);
        const auto c = nlohmann::json::parse(read_text(out / "feature_sets" / set / "construction.json"));
        CHECK(c.at("images") == 40);
        CHECK(c.at("steps") == 10);
        CHECK(c.at("mean_final_loss").get<double>() < c.at("mean_start_loss").get<double>());
    }
    CHECK(nlohmann::json::parse(read_text(out / "feature_sets/robust/construction.json")).at("source") ==
          (out / "sources/pgd_at/last.safetensors").string());
    CHECK(nlohmann::json::parse(read_text(out / "feature_sets/nonrobust/construction.json")).at("source") ==
          (out / "sources/natural/last.safetensors").string());
    const cw::st::File robust = cw::st::read_file((out / "feature_sets/robust/set.safetensors").string());
    CHECK(robust.tensors.at("images").shape == std::vector<int64_t>{40, 3, 32, 32});
    CHECK(robust.metadata.at("source_model") == (out / "sources/pgd_at/last.safetensors").string());

    const std::string summary = read_text(out / "summary.md");
    for (const char* row : {"| original |", "| robust_set |", "| nonrobust_set |", "| pgd_at |"})
        CHECK(summary.find(row) != std::string::npos);
    const std::string table = read_text(out / "features_table.md");
    CHECK(table.find("| robust | 40 | 10 | 0.1 |") != std::string::npos);
    CHECK(table.find("| class | original clean | original PGD-20 | robust_set clean |") != std::string::npos);
    CHECK(line_count(read_text(out / "per_class.csv")) == 11);

    // --resume: everything finished, nothing trains or builds again.
    const Output again = run_experiment("benz_features", std::string(kTiny) + " --resume --out " + out.string());
    INFO(again.text);
    REQUIRE(again.code == 0);
    CHECK(again.text.find("nonrobust_set finished before; skipped") != std::string::npos);
    CHECK(again.text.find("feature_sets/robust finished before; skipped") != std::string::npos);
    CHECK(again.text.find("epoch 1/") == std::string::npos);
    CHECK(again.text.find("feature set: batch") == std::string::npos);

    // Given source weights: no source trains; the sets come from those files.
    const fs::path out2 = fresh_dir("cw_benz_features_given");
    const Output given = run_experiment("benz_features", std::string(kTiny) + " --natural-weights " +
                                                             (out / "sources/natural/last.safetensors").string() +
                                                             " --robust-weights " + (out / "sources/pgd_at/last.safetensors").string() +
                                                             " --out " + out2.string());
    INFO(given.text);
    REQUIRE(given.code == 0);
    CHECK(!fs::exists(out2 / "sources"));
    CHECK(given.text.find("(pgd_at) into") == std::string::npos);
    // Same sources, seed and images: the same sets.
    CHECK(cw::st::read_file((out2 / "feature_sets/robust/set.safetensors").string()).tensors.at("images").bytes ==
          robust.tensors.at("images").bytes);
    fs::remove_all(out);
    fs::remove_all(out2);
}

TEST_CASE("benz_features: --help and bad source weights", "[benz_features][experiments]") {
    const Output help = run_experiment("benz_features", "--help");
    CHECK(help.code == 0);
    for (const char* flag : {"--feature-steps", "--feature-step-size", "--feature-n", "--natural-weights",
                             "--robust-weights", "--quick", "--resume", "--epochs", "--eps", "--attack-steps"})
        CHECK(help.text.find(flag) != std::string::npos);
    const Output bad = run_experiment("benz_features", "--robust-weights /nonexistent/x.safetensors --device cpu", "2>&1 >/dev/null");
    CHECK(bad.code != 0);
    CHECK(line_count(bad.text) == 1);
    CHECK_THAT(bad.text, Catch::Contains("--robust-weights"));
}
