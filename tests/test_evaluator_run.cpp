// The evaluator end to end on a small trained model: files and progress lines, the results.json contract, and
// resuming an interrupted run (at any step) to exactly the results of an uninterrupted one.
#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "eval/atomic_file.h"
#include "attacks/autoattack.h"
#include "eval/evaluator.h"
#include "attacks/fgsm.h"
#include "attacks/pgd.h"
#include "tests/test_attacks_fixture.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw::eval;
using namespace cw_test;
namespace fs = std::filesystem;

namespace {
struct TempDir {
    fs::path path;
    TempDir() : path(fs::temp_directory_path() / ("cw_evaluator_test_" + std::to_string(::getpid()))) {
        fs::remove_all(path);
    }
    ~TempDir() { fs::remove_all(path); }
    std::string sub(const std::string& name) const { return (path / name).string(); }
};

BatchSource three_batches() {
    const Blobs b = make_blobs(48, 2024);
    std::vector<EvalBatch> batches;
    const auto xs = b.x.to_vector();
    for (int k = 0; k < 3; ++k) {
        EvalBatch e;
        e.images = Tensor::from_vector(std::vector<float>(xs.begin() + k * 16 * 192, xs.begin() + (k + 1) * 16 * 192),
                                       {16, 3, 8, 8});
        e.labels = Tensor::from_labels(std::vector<int32_t>(b.labels.begin() + k * 16, b.labels.begin() + (k + 1) * 16));
        for (int i = 0; i < 16; ++i) e.indices.push_back(1000 + k * 16 + i);
        batches.push_back(e);
    }
    return batches_from(std::move(batches));
}

struct Suite {   // fgsm, pgd5, autoattack (cut down): 3 clean + 3 + 3 + 4·3 = 21 steps on 3 batches
    std::unique_ptr<Attack> fgsm, pgd, aa;
    Suite() {
        fgsm = std::make_unique<Fgsm>(FgsmConfig{kBlobEps, false, ModelMode::Eval});
        PgdConfig c;
        c.eps = kBlobEps;
        c.alpha = kBlobEps / 4;
        c.steps = 5;
        pgd = std::make_unique<Pgd>(c);
        AutoAttackConfig a;
        a.eps = kBlobEps;
        a.n_iter = 8;
        a.n_target_classes = 3;
        a.square_queries = 40;
        aa = make_autoattack(a);
        for (Attack* x : list()) x->set_log(nullptr);
    }
    std::vector<Attack*> list() const { return {fgsm.get(), pgd.get(), aa.get()}; }
};

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

// results.json without the wall-clock fields
nlohmann::json timeless(nlohmann::json j) {
    for (auto& e : j["evaluations"]) e.erase("time_s");
    return j;
}
}  // namespace

TEST_CASE("the evaluator writes results.json, records.csv and AutoAttack-style progress", "[attacks]") {
    nn::Module& model = trained_mlp();
    TempDir tmp;
    Suite suite;
    std::ostringstream log;
    EvalOptions opt = options(tmp.sub("run"));
    opt.log = &log;
    const EvalOutcome out = evaluate(model, three_batches(), suite.list(), opt);

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

    const nlohmann::json j = nlohmann::json::parse(read_file_text(tmp.sub("run/results.json")));
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

    const EvalRecords csv = parse_records_csv(read_file_text(tmp.sub("run/records.csv")));
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
    TempDir tmp;
    const BatchSource data = three_batches();
    Suite suite;
    const EvalOutcome full = evaluate(model, data, suite.list(), options(tmp.sub("full")));
    const std::string full_csv = read_file_text(tmp.sub("full/records.csv"));

    // Interrupt mid-clean-pass, mid-plain-attack, mid-ensemble-stage and just before the end; then a chain of
    // interruptions.
    const std::vector<std::vector<int64_t>> plans = {{2}, {4}, {13}, {20}, {1, 6, 9}};
    for (size_t p = 0; p < plans.size(); ++p) {
        const std::string dir = tmp.sub("resume" + std::to_string(p));
        Suite fresh;   // a new process would build new attack objects
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
        REQUIRE(read_file_text(dir + "/records.csv") == full_csv);
        REQUIRE(timeless(resumed.results) == timeless(full.results));
    }

    // A state written by a different evaluation is refused.
    Suite other;
    std::vector<Attack*> fewer = {other.fgsm.get()};
    EvalOptions opt = options(tmp.sub("resume0"));
    opt.resume = true;
    REQUIRE_THROWS_WITH(evaluate(model, data, fewer, opt), Catch::Contains("different evaluation"));
}
