// The audit command: flag handling (one line naming the flag, exit 1) and an end-to-end run on MNIST with a
// LeNet-5 trained and saved by the test (skipped only when the MNIST files are not in the data folder), its
// accuracies, per-class numbers and --resume.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "jobs/audit.h"
#include "eval/eval_records.h"
#include "datasets/batch.h"
#include "datasets/error.h"
#include "datasets/registry.h"
#include "nn/checkpoint.h"
#include "nn/optim.h"
#include "tests/skip.h"

using namespace cw;
using namespace cw::eval;
namespace fs = std::filesystem;

namespace {
struct AuditRun {
    int rc;
    std::string out, err;
};
AuditRun audit(std::vector<std::string> args) {
    args.insert(args.begin(), "audit");
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    std::ostringstream out, err;
    const int rc = audit_main(static_cast<int>(argv.size()), argv.data(), out, err);
    return {rc, out.str(), err.str()};
}
}  // namespace

TEST_CASE("eps and alpha parse as fractions or numbers", "[attacks]") {
    REQUIRE(parse_fraction("--eps", "8/255") == Approx(8.0 / 255));
    REQUIRE(parse_fraction("--eps", "0.3") == Approx(0.3));
    REQUIRE(parse_fraction("--eps", "0") == 0.f);
    REQUIRE_THROWS_WITH(parse_fraction("--eps", "8/"), Catch::StartsWith("--eps:"));
    REQUIRE_THROWS_WITH(parse_fraction("--eps", "abc"), Catch::StartsWith("--eps:"));
    REQUIRE_THROWS_WITH(parse_fraction("--alpha", "-1"), Catch::StartsWith("--alpha:"));
    REQUIRE_THROWS_WITH(parse_fraction("--eps", "1/0"), Catch::StartsWith("--eps:"));
}

TEST_CASE("eps and alpha outside [0, 1] are an error naming the flag", "[attacks]") {
    REQUIRE(parse_fraction("--eps", "1") == 1.f);
    REQUIRE(parse_fraction("--eps", "255/255") == 1.f);
    REQUIRE_THROWS_WITH(parse_fraction("--eps", "300/255"), Catch::StartsWith("--eps:") && Catch::Contains("[0, 1]"));
    REQUIRE_THROWS_WITH(parse_fraction("--alpha", "2"), Catch::StartsWith("--alpha:") && Catch::Contains("[0, 1]"));
    const AuditRun r = audit({"--weights", "w.safetensors", "--dataset", "mnist", "--out", "o", "--eps", "300/255"});
    INFO(r.err);
    REQUIRE(r.rc == 1);
    REQUIRE(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    REQUIRE(r.err.find("--eps") != std::string::npos);
}

TEST_CASE("a CIFAR-shaped model audited on MNIST: one line naming both geometries, before any data loads",
          "[attacks]") {
    // No data folder is needed: the metadata and the dataset catalogue decide before the images are read.
    const fs::path dir = fs::temp_directory_path() / ("cw_audit_geometry_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string weights = (dir / "cifar_lenet.safetensors").string();
    nn::ModelConfig cfg;  // 3x32x32, 10 classes
    cfg.normalize_mean = {0.49f, 0.48f, 0.45f};
    cfg.normalize_std = {0.25f, 0.24f, 0.26f};
    auto model = nn::make_model("lenet5", cfg);
    nn::save_model(*model, weights, nn::checkpoint_metadata("lenet5", cfg, {"natural", 0, 0}));
    const AuditRun r = audit({"--weights", weights, "--dataset", "mnist", "--data-dir", (dir / "no_data").string(),
                              "--out", (dir / "out").string(), "--device", "cpu", "--n", "10"});
    fs::remove_all(dir);
    INFO(r.err);
    REQUIRE(r.rc == 1);
    REQUIRE(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    REQUIRE(r.err.find("--dataset") != std::string::npos);
    REQUIRE(r.err.find("lenet5 model") != std::string::npos);
    REQUIRE(r.err.find("built for 3x32x32 inputs") != std::string::npos);
    REQUIRE(r.err.find("mnist are 1x28x28") != std::string::npos);

    cfg.in_channels = 1;
    cfg.input_size = 28;
    REQUIRE(nn::input_geometry_mismatch("m", cfg, "images", 1, 28, 28).empty());
    REQUIRE(nn::input_geometry_mismatch("m", cfg, "images", 1, 28, 32) == "m was built for 1x28x28 inputs, but images are 1x28x32");
}

TEST_CASE("audit rejects bad flags with one line naming the flag", "[attacks]") {
    const std::vector<std::string> base = {"--weights", "w.safetensors", "--dataset", "mnist", "--out", "o"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {with({"--bogus", "1"}), "--bogus"},
        {{"--dataset", "mnist", "--out", "o"}, "--weights"},
        {with({"--eps", "eight"}), "--eps"},
        {with({"--n", "ten"}), "--n"},
        {with({"--n", "0"}), "--n"},
        {with({"--batch-size", "0"}), "--batch-size"},
        {with({"--attacks", "pgd20,pgd-twenty"}), "--attacks"},
        {with({"--device", "gpu"}), "--device"},
        {with({"--device", "cpu"}), "--weights"},   // the checkpoint does not exist
    };
    for (const auto& [args, flag] : cases) {
        const AuditRun r = audit(args);
        INFO(r.err);
        REQUIRE(r.rc == 1);
        REQUIRE(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        REQUIRE(r.err.find(flag) != std::string::npos);
    }
    const AuditRun help = audit({"--help"});
    REQUIRE(help.rc == 0);
    REQUIRE(help.out.find("--attacks") != std::string::npos);
}

// The first 100 MNIST test images under the audit of a LeNet-5 trained here for a few seconds on real MNIST.
TEST_CASE("audit runs end to end on MNIST and resumes to the same results", "[attacks]") {
    std::optional<data::Dataset> train;
    try {
        train = data::load_dataset("mnist", "train");
    } catch (const data::DataError& e) {
        // absent files skip; a damaged or partial MNIST is a failure, not a skip
        if (std::string(e.what()).rfind("mnist: train-images-idx3-ubyte[.gz] not found", 0) != 0) throw;
        CW_SKIP(std::string("MNIST not available: ") + e.what());
    }
    const fs::path dir = fs::temp_directory_path() / ("cw_audit_test_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    nn::ModelConfig cfg;
    cfg.in_channels = 1;
    cfg.input_size = 28;
    const auto saved_rng = global_rng().state();   // initialisation draws from the global generator: leave it as found
    manual_seed(3);
    auto model = nn::make_model("lenet5", cfg);
    global_rng().set_state(saved_rng);
    {   // 150 SGD steps of 64 images: well above 90% clean accuracy on MNIST, no robustness at ε = 0.3
        nn::SgdOptions o;
        o.lr = 0.05f;
        o.momentum = 0.9f;
        o.weight_decay = 0.f;
        nn::SGD sgd(model->parameters(), o);
        Rng rng(8);
        const std::vector<int64_t> order = rng.permutation(train->size());
        model->train();
        for (int64_t s = 0; s < 150; ++s) {
            const data::Batch b = data::make_batch(*train, std::vector<int64_t>(order.begin() + s * 64, order.begin() + (s + 1) * 64));
            sgd.zero_grad();
            cross_entropy(model->forward(b.images), b.labels).backward();
            sgd.step();
        }
        model->eval();
    }
    const std::string weights = (dir / "lenet5.safetensors").string();
    fs::create_directories(dir);
    nn::save_model(*model, weights, nn::checkpoint_metadata("lenet5", cfg, {"standard", 0.0, 3}));

    const std::vector<std::string> args = {"--weights", weights, "--dataset", "mnist", "--split", "test",
                                           "--attacks", "clean,fgsm,pgd10,apgd-ce,square100", "--eps", "0.3",
                                           "--alpha", "0.05", "--n", "100", "--batch-size", "50", "--device", "cpu",
                                           "--out", (dir / "out").string(), "--seed", "1"};
    const AuditRun first = audit(args);
    INFO(first.out << first.err);
    REQUIRE(first.rc == 0);
    REQUIRE(first.out.find("robust accuracy after APGD-CE") != std::string::npos);
    const auto results = nlohmann::json::parse(util::read_file_text((dir / "out/results.json").string()));
    REQUIRE(results["dataset"] == "mnist");
    REQUIRE(results["num_examples"] == 100);
    REQUIRE(results["model"]["arch"] == "lenet5");
    REQUIRE(results["method"] == "standard");
    REQUIRE(results["classes"].size() == 10);
    REQUIRE(results["evaluations"].size() == 5);
    const std::string csv = util::read_file_text((dir / "out/records.csv").string());
    REQUIRE(csv.rfind("index,label,clean_pred,fgsm_pred,pgd10_pred,apgd-ce_pred,square100_pred\n0,", 0) == 0);

    // The numbers: a trained model is accurate, and an undefended one loses most of it at ε = 0.3.
    const EvalRecords rec = parse_records_csv(csv);
    REQUIRE(rec.size() == 100);
    const double clean = results["evaluations"][0]["accuracy"];
    REQUIRE(results["evaluations"][0]["name"] == "clean");
    REQUIRE(clean > 0.85);
    for (size_t e = 1; e < 5; ++e) {
        INFO(results["evaluations"][e]["name"]);
        REQUIRE(results["evaluations"][e]["accuracy"].get<double>() < clean);
    }
    REQUIRE(results["evaluations"][2]["name"] == "pgd10");
    REQUIRE(results["evaluations"][2]["accuracy"].get<double>() < 0.5 * clean);
    REQUIRE(results["evaluations"][3]["accuracy"].get<double>() < 0.5 * clean);   // apgd-ce
    // Per class: ten numbers per evaluation, agreeing with the per-sample records. Clean: exactly. Attacked: between
    // AutoAttack's rule (clean-correct and still correct) and plain accuracy at x_adv, whichever rule is in force;
    // and their count-weighted mean is the overall accuracy.
    std::vector<int> count(10, 0), clean_ok(10, 0);
    for (int64_t i = 0; i < rec.size(); ++i) {
        ++count[rec.label[i]];
        clean_ok[rec.label[i]] += rec.clean_pred[i] == rec.label[i];
    }
    for (size_t e = 0; e < 5; ++e) {
        const auto per_class = results["evaluations"][e]["per_class_accuracy"].get<std::vector<double>>();
        INFO(results["evaluations"][e]["name"]);
        REQUIRE(per_class.size() == 10);
        double weighted = 0;
        for (int c = 0; c < 10; ++c) {
            INFO("class " << c);
            REQUIRE(count[c] > 0);
            weighted += per_class[c] * count[c] / 100.0;
            if (e == 0) {
                REQUIRE(per_class[c] == Approx(double(clean_ok[c]) / count[c]).margin(1e-9));
                continue;
            }
            int both = 0, adv = 0;
            for (int64_t i = 0; i < rec.size(); ++i) {
                if (rec.label[i] != c) continue;
                adv += rec.adv_pred[e - 1][i] == c;
                both += rec.adv_pred[e - 1][i] == c && rec.clean_pred[i] == c;
            }
            REQUIRE(per_class[c] >= double(both) / count[c] - 1e-9);
            REQUIRE(per_class[c] <= double(adv) / count[c] + 1e-9);
        }
        REQUIRE(weighted == Approx(results["evaluations"][e]["accuracy"].get<double>()).margin(1e-9));
    }

    // --resume of a finished run redoes nothing and rewrites the same records
    std::vector<std::string> again = args;
    again.push_back("--resume");
    const AuditRun second = audit(again);
    REQUIRE(second.rc == 0);
    REQUIRE(second.out.find("steps already done") != std::string::npos);
    REQUIRE(util::read_file_text((dir / "out/records.csv").string()) == csv);
    // ... and refuses a state from a different run
    std::vector<std::string> other = again;
    *(std::find(other.begin(), other.end(), "--n") + 1) = "20";   // --n 20 instead of 100
    const AuditRun third = audit(other);
    REQUIRE(third.rc == 1);
    REQUIRE(third.err.find("different evaluation") != std::string::npos);
    REQUIRE(third.err.find("run.n is 100 in the state, 20 here") != std::string::npos);  // says what differs
    fs::remove_all(dir);
}

TEST_CASE("audit --classes top:K evaluates the classes a job trained on, relabelled in the job's order",
          "[attacks][real-data]") {
    std::optional<data::Dataset> train, test;
    try {
        train = data::load_dataset("mnist", "train");
        test = data::load_dataset("mnist", "test");
    } catch (const data::DataError& e) {
        if (std::string(e.what()).rfind("mnist: train-images-idx3-ubyte[.gz] not found", 0) != 0) throw;
        CW_SKIP(std::string("MNIST not available: ") + e.what());
    }
    // MNIST's three most frequent training classes, counted here: 1 (6,742), 7 (6,265), 3 (6,131).
    std::vector<int64_t> per_class(10, 0);
    for (int64_t i = 0; i < train->size(); ++i) ++per_class[train->labels[i]];
    REQUIRE(per_class[1] == 6742);
    REQUIRE(per_class[7] == 6265);
    REQUIRE(per_class[3] == 6131);
    const std::vector<int> kept = {1, 7, 3};

    const fs::path dir = fs::temp_directory_path() / ("cw_audit_classes_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    nn::ModelConfig cfg;
    cfg.in_channels = 1;
    cfg.input_size = 28;
    cfg.num_classes = 3;
    const auto saved_rng = global_rng().state();
    manual_seed(5);
    auto model = nn::make_model("lenet5", cfg);
    global_rng().set_state(saved_rng);
    const std::string weights = (dir / "three.safetensors").string();
    nn::save_model(*model, weights, nn::checkpoint_metadata("lenet5", cfg, {"standard", 0.0, 5}));

    const std::vector<std::string> base = {"--weights", weights, "--dataset", "mnist", "--attacks", "clean", "--n", "60",
                                           "--device", "cpu", "--out", (dir / "out").string()};
    SECTION("with --classes top:3") {
        std::vector<std::string> args = base;
        args.insert(args.end(), {"--classes", "top:3"});
        const AuditRun run = audit(args);
        INFO(run.out << run.err);
        REQUIRE(run.rc == 0);
        const auto results = nlohmann::json::parse(util::read_file_text((dir / "out/results.json").string()));
        const std::vector<std::string> names = results["classes"];
        REQUIRE(names == std::vector<std::string>{test->class_names[1], test->class_names[7], test->class_names[3]});
        // The records: the first 60 test images of those classes, in test order, labelled 0, 1, 2 as 1, 7, 3.
        const EvalRecords rec = parse_records_csv(util::read_file_text((dir / "out/records.csv").string()));
        std::vector<int32_t> expected;
        for (int64_t i = 0; i < test->size() && expected.size() < 60; ++i) {
            const auto at = std::find(kept.begin(), kept.end(), test->labels[i]);
            if (at != kept.end()) expected.push_back(static_cast<int32_t>(at - kept.begin()));
        }
        REQUIRE(rec.size() == 60);
        REQUIRE(rec.label == expected);
    }
    SECTION("without --classes: one line saying which flag the 3-class model needs") {
        const AuditRun run = audit(base);
        REQUIRE(run.rc == 1);
        CHECK(run.err == "audit: --weights: the model has 3 classes, dataset mnist has 10 (a model trained with "
                         "--classes top:K needs --classes top:K)\n");
    }
    SECTION("a model trained on another dataset of the same shape: audited (a transfer), and said") {
        for (const char* trained_on : {"fashion-mnist", "mnist"}) {
            nn::Metadata md = nn::checkpoint_metadata("lenet5", cfg, {"standard", 0.0, 5});
            md["dataset"] = trained_on;
            const std::string other = (dir / (std::string(trained_on) + ".safetensors")).string();
            nn::save_model(*model, other, md);
            std::vector<std::string> args = base;
            args[1] = other;
            args.insert(args.end(), {"--classes", "top:3"});
            const AuditRun run = audit(args);
            INFO(run.out << run.err);
            REQUIRE(run.rc == 0);
            const bool noted = run.out.find("note: the model was trained on fashion-mnist; this audit uses mnist\n") !=
                               std::string::npos;
            CHECK(noted == (std::string(trained_on) == "fashion-mnist"));
        }
    }
    SECTION("a bad rule names --classes") {
        std::vector<std::string> args = base;
        args.insert(args.end(), {"--classes", "top:1"});
        const AuditRun run = audit(args);
        REQUIRE(run.rc == 1);
        CHECK(run.err == "audit: --classes: expected all or top:K with 2 <= K <= 10, got 'top:1'\n");
    }
    fs::remove_all(dir);
}
