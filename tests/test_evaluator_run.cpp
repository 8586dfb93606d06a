// The evaluator end to end on a small trained model: files and progress lines, the results.json contract, and
// resuming an interrupted run (at any step) to exactly the results of an uninterrupted one.
#include <filesystem>
#include <functional>
#include <sstream>
#include <unistd.h>

#include "util/atomic_file.h"
#include "attacks/autoattack.h"
#include "eval/evaluator.h"
#include "attacks/fgsm.h"
#include "attacks/pgd.h"
#include "tests/test_evaluator_util.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw::eval;
using namespace cw_test;
namespace fs = std::filesystem;

namespace {
EvalOptions options(const std::string& dir) {
    EvalOptions o;
    o.out_dir = dir;
    o.info.dataset = "blobs";
    o.info.split = "test";
    o.info.arch = "mlp";
    o.info.seed = 7;
    for (int k = 0; k < kClasses; ++k) o.info.classes.push_back("class" + std::to_string(k));
    return o;
}

}  // namespace

TEST_CASE("the evaluator writes results.json, records.csv and AutoAttack-style progress", "[attacks]") {
    nn::Module& model = trained_mlp();
    EvalTempDir tmp("cw_evaluator_test");
    BlobAttackSuite suite;
    std::ostringstream log;
    EvalOptions opt = options(tmp.sub("run"));
    opt.log = &log;
    const EvalOutcome out = evaluate(model, blob_batches(3, 2024, 1000), suite.list(), opt);

    const std::string text = log.str();
    INFO(text);
    REQUIRE(text.find("clean accuracy: ") != std::string::npos);
    REQUIRE(text.find("fgsm - batch 3/3 - ") != std::string::npos);
    REQUIRE(text.find("successfully perturbed") != std::string::npos);
    REQUIRE(text.find("apgd-t - batch 2/3 - ") != std::string::npos);
    REQUIRE(text.find("robust accuracy after APGD-CE: ") != std::string::npos);
    REQUIRE(text.find("robust accuracy after SQUARE40: ") != std::string::npos);
    REQUIRE(text.find("(total time ") != std::string::npos);
    REQUIRE(text.find("class9") != std::string::npos);   // the per-class table
    REQUIRE(text.find("overall") != std::string::npos);

    const nlohmann::json j = nlohmann::json::parse(util::read_file_text(tmp.sub("run/results.json")));
    REQUIRE(j == out.results);
    for (const auto& f : results_required_fields()) REQUIRE(j.contains(f));
    REQUIRE(j["num_examples"] == 48);
    REQUIRE(j["seed"] == 7);
    REQUIRE(j["evaluations"].size() == 4);
    for (size_t e = 0; e < 4; ++e)
        for (const auto& f : evaluation_required_fields(e > 0)) {
            INFO("evaluation " << e << " field " << f);
            REQUIRE(j["evaluations"][e].contains(f));
        }
    REQUIRE(j["evaluations"][3]["name"] == "autoattack");
    REQUIRE(j["evaluations"][3]["stages"].size() == 4);
    REQUIRE(j["evaluations"][3]["attack"]["attacks"][3] == "square40");
    REQUIRE(j["evaluations"][3]["sanity_violations"] == 0);

    const EvalRecords csv = parse_records_csv(util::read_file_text(tmp.sub("run/records.csv")));
    REQUIRE(csv.index == out.records.index);
    REQUIRE(csv.index.front() == 1000);
    REQUIRE(csv.attacks == std::vector<std::string>{"fgsm", "pgd5", "autoattack"});
    REQUIRE(csv.adv_pred == out.records.adv_pred);

    // Robust ≤ clean; AutoAttack ≤ its last stage's accuracy = its accuracy; stages never increase.
    const double clean = j["evaluations"][0]["accuracy"];
    double prev = clean;
    for (const auto& s : j["evaluations"][3]["stages"]) {
        REQUIRE(s["accuracy"].get<double>() <= prev);
        prev = s["accuracy"];
    }
    REQUIRE(j["evaluations"][3]["accuracy"].get<double>() == Approx(prev));
    for (size_t e = 1; e < 4; ++e) REQUIRE(j["evaluations"][e]["accuracy"].get<double>() <= clean);
}

TEST_CASE("an interrupted evaluation resumes to identical results", "[attacks]") {
    nn::Module& model = trained_mlp();
    EvalTempDir tmp("cw_evaluator_test");
    const BatchSource data = blob_batches(3, 2024, 1000);
    BlobAttackSuite suite;
    const EvalOutcome full = evaluate(model, data, suite.list(), options(tmp.sub("full")));
    const std::string full_csv = util::read_file_text(tmp.sub("full/records.csv"));

    // Interrupt mid-clean-pass, mid-plain-attack, mid-ensemble-stage and just before the end; then a chain of
    // interruptions.
    const std::vector<std::vector<int64_t>> plans = {{2}, {4}, {13}, {20}, {1, 6, 9}};
    for (size_t p = 0; p < plans.size(); ++p) {
        const std::string dir = tmp.sub("resume" + std::to_string(p));
        BlobAttackSuite fresh;   // a new process would build new attack objects
        bool first = true;
        for (int64_t stop : plans[p]) {
            EvalOptions opt = options(dir);
            opt.resume = !first;
            opt.stop_after_steps = stop;
            REQUIRE_THROWS_AS(evaluate(model, data, fresh.list(), opt), EvalInterrupted);
            REQUIRE(fs::exists(dir + "/eval_state.json"));
            REQUIRE_FALSE(fs::exists(dir + "/results.json"));
            first = false;
        }
        EvalOptions opt = options(dir);
        opt.resume = true;
        const EvalOutcome resumed = evaluate(model, data, fresh.list(), opt);
        INFO("plan " << p);
        REQUIRE(resumed.records.adv_pred == full.records.adv_pred);
        REQUIRE(util::read_file_text(dir + "/records.csv") == full_csv);
        REQUIRE(timeless(resumed.results) == timeless(full.results));
    }

    // A state written by a different evaluation is refused.
    BlobAttackSuite other;
    std::vector<Attack*> fewer = {other.fgsm.get()};
    EvalOptions opt = options(tmp.sub("resume0"));
    opt.resume = true;
    REQUIRE_THROWS_WITH(evaluate(model, data, fewer, opt), Catch::Contains("different evaluation"));
}

// A state file that is not what the evaluator writes (edited, or damaged on disk) is refused in one line naming the
// file and what is wrong, before anything indexes the records with it. Seen failing without the checks: an attack's
// predictions shorter than the records ended the process with "munmap_chunk(): invalid pointer", a truncated file
// with the JSON library's message and no file name.
TEST_CASE("evaluator: a damaged state file is refused in one line naming the file and the field", "[attacks]") {
    nn::Module& model = trained_mlp();
    EvalTempDir tmp("cw_evaluator_damaged");
    const BatchSource data = blob_batches(3, 2024, 1000);
    const std::string dir = tmp.sub("run"), file = dir + "/eval_state.json";
    {
        BlobAttackSuite suite;
        EvalOptions opt = options(dir);
        opt.stop_after_steps = 4;  // the clean pass (3 batches) and one batch of the first attack
        REQUIRE_THROWS_AS(evaluate(model, data, suite.list(), opt), EvalInterrupted);
    }
    const std::string good = util::read_file_text(file);
    auto refused = [&](const std::function<void(nlohmann::json&)>& damage, const std::string& expected) {
        nlohmann::json j = nlohmann::json::parse(good);
        damage(j);
        util::write_file_atomic(file, j.dump());
        BlobAttackSuite suite;
        EvalOptions opt = options(dir);
        opt.resume = true;
        REQUIRE_THROWS_WITH(evaluate(model, data, suite.list(), opt),
                            Catch::StartsWith(file + ": malformed evaluation state: " + expected) &&
                                Catch::EndsWith("; remove it or run without --resume"));
    };
    refused([](nlohmann::json& j) { j["adv_pred"][0].erase(0); }, "adv_pred of attack '");
    refused([](nlohmann::json& j) { j["label"].erase(0); }, "index, label and clean_pred differ in length");
    refused([](nlohmann::json& j) { j["batch_offsets"].back() = 1; }, "batch_offsets must run from 0");
    refused([](nlohmann::json& j) { j["time_s"].erase(0); }, "adv_pred, broken_by, time_s and sanity_violations");
    refused([](nlohmann::json& j) { j["label"][0] = kClasses; }, "a label or clean prediction is not one of");
    refused([](nlohmann::json& j) { j["adv_pred"][0][0] = -2; }, "an attack's prediction is not one of");
    refused([](nlohmann::json& j) { j["attacks"][0] = "pgd99"; }, "its attacks are not this evaluation's");

    util::write_file_atomic(file, good.substr(0, good.size() / 2));
    BlobAttackSuite suite;
    EvalOptions opt = options(dir);
    opt.resume = true;
    REQUIRE_THROWS_WITH(evaluate(model, data, suite.list(), opt),
                        Catch::StartsWith(file + ": not an evaluation state (malformed JSON at byte "));
    // The undamaged state still resumes.
    util::write_file_atomic(file, good);
    BlobAttackSuite again;
    CHECK_NOTHROW(evaluate(model, data, again.list(), opt));
}
