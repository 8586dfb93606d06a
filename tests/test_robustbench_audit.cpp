// A converted RobustBench model is audited unchanged: build/tools/audit and experiments/fairtat_cfp take the
// converted twin of tests/fixtures/robustbench/ (a DeepMind PreAct ResNet-18 with SiLU and built-in normalisation,
// narrowed; its equality with PyTorch is tests/test_robustbench_twins.cpp's) with --weights alone, the architecture
// from its metadata. Tiny sizes: 20 synthetic 3x32x32 images.
#include "tests/test_experiments_util.h"
#include "tests/test_nn_util.h"

using namespace cw_experiments_test;

namespace {
std::string twin() { return cw_nn_test::fixture_path("robustbench/dm_preact_resnet18_w2_silu.safetensors"); }
}  // namespace

TEST_CASE("robustbench: build/tools/audit audits a converted model from its metadata alone", "[robustbench][experiments]") {
    REQUIRE(!twin().empty());
    const fs::path out = fresh_dir("cw_robustbench_audit");
    const Output o = cw_test::run_shell("CLASSWISE_GNUPLOT=/nonexistent " + (repo_root() / "build/tools/audit").string() +
                                        " --weights " + twin() + " --dataset synthetic --n 20 --batch-size 10 "
                                        "--attacks clean,apgd-ce,autoattack --device cpu --out " + out.string() + " 2>&1");
    INFO(o.text);
    REQUIRE(o.code == 0);
    CHECK(o.text.find("(dm_preact_resnet18)") != std::string::npos);
    CHECK(o.text.find("note: the model was trained on cifar10; this audit uses synthetic") != std::string::npos);
    const nlohmann::json r = contract_results(out / "results.json");
    CHECK(r.at("model").at("arch") == "dm_preact_resnet18");
    CHECK(r.at("method") == "robustbench");
    CHECK(r.at("num_examples") == 20);
    std::vector<std::string> names;
    for (const auto& e : r.at("evaluations")) names.push_back(e.at("name"));
    CHECK(names == std::vector<std::string>{"clean", "apgd-ce", "autoattack"});
    for (const auto& e : r.at("evaluations")) CHECK(e.at("per_class_accuracy").size() == 10);
    fs::remove_all(out);
}

TEST_CASE("robustbench: fairtat_cfp --weights reads the CFP off a converted model", "[robustbench][experiments]") {
    REQUIRE(!twin().empty());
    const fs::path out = fresh_dir("cw_robustbench_cfp");
    const Output o = run_experiment("fairtat_cfp", "--weights " + twin() + " --dataset synthetic --eval-n 20 "
                                                   "--final-attacks pgd20,apgd-ce --device cpu --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    CHECK(o.text.find("epoch 1/") == std::string::npos);   // nothing trained
    CHECK(o.text.find("Which classes absorb the errors") != std::string::npos);
    const fs::path run = out / "robustbench_dm_preact_resnet18_w2_silu";
    const nlohmann::json r = contract_results(run / "results.json");
    CHECK(r.at("model").at("arch") == "dm_preact_resnet18");
    CHECK(r.at("num_examples") == 20);
    CHECK(read_text(out / "summary.md").find("| robustbench_dm_preact_resnet18_w2_silu |") != std::string::npos);
    fs::remove_all(out);
}
