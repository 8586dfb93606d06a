// build/tools/audit stopped by a signal mid-attack (a real process, signalled from outside when its output reaches
// the attack): it finishes the step in progress, saves its state, says so, exits 143, and --resume ends with the
// numbers of an uninterrupted run. Seen failing before audit installed the handlers: SIGTERM killed it at once,
// with no line saying where it stopped or how to continue.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "engine/rng.h"
#include "nn/checkpoint.h"
#include "nn/model_registry.h"
#include "tests/test_experiments_util.h"
#include "tests/test_process.h"

namespace fs = std::filesystem;
using cw_experiments_test::fresh_dir;
using cw_test::Spawned;

namespace {

// The evaluations without their wall time (one thread: everything else bit for bit).
std::string timeless(const fs::path& results) {
    nlohmann::json e = nlohmann::json::parse(cw::util::read_file_text(results.string())).at("evaluations");
    for (auto& x : e) x.erase("time_s");
    return e.dump();
}

// An untrained LeNet-5 for the synthetic set's 3x32x32 images, saved in `dir`: the numbers do not matter, only that a
// resumed run repeats them.
std::string untrained_lenet(const fs::path& dir) {
    cw::nn::ModelConfig cfg;
    cfg.in_channels = 3;
    cfg.input_size = 32;
    const auto saved_rng = cw::global_rng().state();   // initialisation draws from the global generator
    cw::manual_seed(4);
    auto model = cw::nn::make_model("lenet5", cfg);
    cw::global_rng().set_state(saved_rng);
    const std::string weights = (dir / "lenet5.safetensors").string();
    cw::nn::save_model(*model, weights, cw::nn::checkpoint_metadata("lenet5", cfg, {"standard", 0.0, 4}));
    return weights;
}

// Runs `command`, sends SIGTERM once its attack reports its first batch, and checks that it stopped cleanly (exit
// 143, the line saying where); returns its output.
std::string stopped_mid_attack(const std::string& command) {
    Spawned p(command);
    REQUIRE(p.wait_for("pgd100 - batch 1/20", 120));
    kill(p.pid, SIGTERM);
    const int code = p.finish();
    INFO(p.text);
    REQUIRE(code == 143);
    CHECK(p.text.find("evaluation stopped by a signal after step ") != std::string::npos);
    return p.text;
}

}  // namespace

TEST_CASE("audit: SIGTERM mid-attack saves the state, says so, and --resume gives the uninterrupted numbers",
          "[attacks][signals]") {
    const fs::path dir = fresh_dir("cw_audit_signals");
    fs::create_directories(dir);
    const std::string weights = untrained_lenet(dir);

    auto audit = [&](const std::string& out, const std::string& extra) {
        return "env CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " +
               (cw_test::repo_root() / "build/tools/audit").string() + " --weights " + weights +
               " --dataset synthetic --attacks clean,pgd100 --eps 8/255 --n 200 --batch-size 10 --device cpu --out " +
               (dir / out).string() + extra;
    };
    {
        Spawned p(audit("whole", ""));
        const int code = p.finish();
        INFO(p.text);
        REQUIRE(code == 0);
    }
    {
        const std::string text = stopped_mid_attack(audit("cut", ""));
        CHECK(text.find("continue with --resume") != std::string::npos);
        CHECK(fs::exists(dir / "cut/eval_state.json"));
        CHECK(!fs::exists(dir / "cut/results.json"));
    }
    Spawned p(audit("cut", " --resume"));
    const int code = p.finish();
    INFO(p.text);
    REQUIRE(code == 0);
    CHECK(p.text.find("resuming from") != std::string::npos);
    CHECK(timeless(dir / "cut/results.json") == timeless(dir / "whole/results.json"));
    CHECK(cw::util::read_file_text((dir / "cut/records.csv").string()) ==
          cw::util::read_file_text((dir / "whole/records.csv").string()));
    fs::remove_all(dir);
}

// fairtat_cfp --weights audits checkpoints the same way, and stops the same way. Seen failing before it installed the
// handlers: killed at once, no line.
TEST_CASE("fairtat_cfp --weights: SIGTERM mid-attack saves the state and says so, exit 143", "[attacks][signals]") {
    const fs::path dir = fresh_dir("cw_cfp_signals");
    fs::create_directories(dir);
    const std::string weights = untrained_lenet(dir);
    stopped_mid_attack("env CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " +
                       (cw_test::repo_root() / "experiments/fairtat_cfp").string() + " --weights " + weights +
                       " --dataset synthetic --final-attacks pgd100 --eval-n 200 --eval-batch-size 10 --device cpu "
                       "--out " + (dir / "cfp").string());
    CHECK(fs::exists(dir / "cfp" / (dir.filename().string() + "_lenet5") / "eval_state.json"));   // <parent>_<stem>
    fs::remove_all(dir);
}

// xu_preliminary's second radius runs after its study, outside the study's signal scope: a SIGTERM there killed the
// process at once, with no line (the evaluation's state of the last step was on disk, but nothing said so). Now it
// stops after the step in progress, says where and how to continue, exits 143, and --resume finishes the pass with
// the numbers of an uninterrupted run.
TEST_CASE("xu_preliminary: SIGTERM in the second-radius pass saves the state and says so; --resume finishes it",
          "[experiments][signals]") {
    const fs::path dir = fresh_dir("cw_xu_signals");
    fs::create_directories(dir);
    auto xu = [&](const std::string& out, const std::string& extra) {
        return "env CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " +
               (cw_test::repo_root() / "experiments/xu_preliminary").string() +
               " --dataset synthetic --arch lenet5 --methods natural --train-n 100 --eval-n 300 --epoch-eval-n 20 "
               "--batch-size 50 --eval-batch-size 10 --epochs 1 --eval-steps 2 --final-checkpoints last --device cpu "
               "--out " + (dir / out).string() + extra;
    };
    {
        Spawned p(xu("whole", ""));
        const int code = p.finish();
        INFO(p.text);
        REQUIRE(code == 0);
    }
    {
        Spawned p(xu("cut", ""));
        REQUIRE(p.wait_for("test images, eps 4/255", 120));   // the second pass has begun
        kill(p.pid, SIGTERM);
        const int code = p.finish();
        INFO(p.text);
        REQUIRE(code == 143);
        CHECK(p.text.find("evaluation stopped by a signal after step ") != std::string::npos);
        CHECK(p.text.find("continue with --resume") != std::string::npos);
        CHECK(fs::exists(dir / "cut/natural/eval_last_eps4/eval_state.json"));
        CHECK(!fs::exists(dir / "cut/natural/eval_last_eps4/results.json"));
        CHECK(!fs::exists(dir / "cut/xu_table.md"));
    }
    Spawned p(xu("cut", " --resume"));
    const int code = p.finish();
    INFO(p.text);
    REQUIRE(code == 0);
    CHECK(timeless(dir / "cut/natural/eval_last_eps4/results.json") ==
          timeless(dir / "whole/natural/eval_last_eps4/results.json"));
    CHECK(fs::exists(dir / "cut/xu_table.md"));
    fs::remove_all(dir);
}
