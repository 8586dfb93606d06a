// What every paper-protocol binary shares: the flags in --help (common, job, method hyper-parameters), the paper's
// defaults per dataset shown by --print-config, and a missing dataset reported in one line that says where it
// looked and how to get it.
#include <catch2/catch.hpp>

#include "nn/checkpoint.h"
#include "nn/model_registry.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

namespace {
const std::vector<std::string> kBinaries = {"xu_preliminary", "frl_tables", "fairtat_cfp"};
}

TEST_CASE("experiments: --help lists the common, job and method flags", "[experiments]") {
    const std::map<std::string, std::vector<std::string>> own = {
        {"xu_preliminary", {"--low-eps"}},
        {"frl_tables", {"--trades-betas", "--finetune-epochs", "--finetune-lr", "--hot-start", "--frl-tau2"}},
        {"fairtat_cfp", {"--weights"}}};
    for (const std::string& bin : kBinaries) {
        INFO(bin);
        const Output o = run_experiment(bin, "--help");
        CHECK(o.code == 0);
        for (const std::string& flag : expected_help_flags()) CHECK(o.text.find(flag) != std::string::npos);
        for (const std::string& flag : own.at(bin)) CHECK(o.text.find(flag) != std::string::npos);
        CHECK(o.text.find("--quick") != std::string::npos);
    }
}

TEST_CASE("experiments: the paper's setting follows --dataset, explicit flags win", "[experiments]") {
    auto config = [](const std::string& bin, const std::string& args) {
        const Output o = run_experiment(bin, args + " --print-config");
        INFO(o.text);
        REQUIRE(o.code == 0);
        return o.text;
    };
    const std::string cifar = config("frl_tables", "");
    CHECK(cifar.find("arch=\"preact_resnet18\"") != std::string::npos);
    CHECK(cifar.find("eps=\"8/255\"") != std::string::npos);
    CHECK(cifar.find("val-split=\"last:300\"") != std::string::npos);
    const std::string gtsrb = config("frl_tables", "--dataset gtsrb32");
    CHECK(gtsrb.find("arch=\"gtsrb_cnn\"") != std::string::npos);
    CHECK(gtsrb.find("eps=\"12/255\"") != std::string::npos);
    CHECK(gtsrb.find("classes=\"top:17\"") != std::string::npos);
    const std::string xu = config("xu_preliminary", "--dataset=gtsrb32 --eps 10/255");
    CHECK(xu.find("eps=\"10/255\"") != std::string::npos);
    CHECK(xu.find("classes=\"all\"") != std::string::npos);   // §2 shows all 43 GTSRB classes
    CHECK(xu.find("low-eps=\"6/255\"") != std::string::npos);
    const std::string quick = config("fairtat_cfp", "--quick");
    CHECK(quick.find("arch=\"lenet5\"") != std::string::npos);
    CHECK(quick.find("square1000") != std::string::npos);
}

TEST_CASE("experiments: a missing dataset is one line saying where we looked and how to get it", "[experiments]") {
    const std::string missing = "/nonexistent/cw_experiments_data";
    for (const std::string& bin : kBinaries) {
        INFO(bin);
        const Output o = run_experiment(bin, "--data-dir " + missing + " --epochs 1 --device cpu --out " +
                                                 fresh_dir("cw_exp_missing").string(),
                                        "2>&1 >/dev/null");
        CHECK(o.code == 1);
        CHECK(line_count(o.text) == 1);
        CHECK(o.text.rfind(bin + ": cifar10: data_batch_1.bin not found (tried: " + missing +
                               "/cifar-10-batches-bin/data_batch_1.bin", 0) == 0);
        CHECK(o.text.find("Get it with: make data DATASET=cifar10") != std::string::npos);
        CHECK(o.text.find("--data-dir / CLASSWISE_DATA") != std::string::npos);
    }
    // fairtat_cfp --weights reads the data through another path (no training job): the same message.
    cw_experiments_test::fs::path dir = fresh_dir("cw_exp_missing_weights");
    cw_experiments_test::fs::create_directories(dir);
    cw::nn::ModelConfig cfg;
    cfg.num_classes = 10;
    cfg.in_channels = 3;
    cfg.input_size = 32;
    auto model = cw::nn::make_model("lenet5", cfg);
    cw::nn::Metadata md = cw::nn::checkpoint_metadata("lenet5", cfg, {"pgd_at", 8.f / 255, 0});
    md["dataset"] = "cifar10";
    cw::nn::save_model(*model, (dir / "m.safetensors").string(), md);
    const Output o = run_experiment("fairtat_cfp", "--weights " + (dir / "m.safetensors").string() + " --data-dir " +
                                                       missing + " --device cpu --out " + (dir / "out").string(),
                                    "2>&1 >/dev/null");
    CHECK(o.code == 1);
    CHECK(line_count(o.text) == 1);
    CHECK(o.text.rfind("fairtat_cfp: cifar10: test_batch.bin (or test.bin) not found (tried: " + missing, 0) == 0);
    CHECK(o.text.find("Get it with: make data DATASET=cifar10") != std::string::npos);
    cw_experiments_test::fs::remove_all(dir);
}
