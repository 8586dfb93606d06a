// The experiment binaries' analyses (protocols/) on hand-made inputs with known answers: FRL's largest constraint
// violation per epoch from history.csv rows, FRL's Table 1 errors, the CFP top classes and their agreement across
// attacks, the per-class tables, argv peeking, and a checkpoint evaluated at a second radius.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "util/atomic_file.h"
#include "util/format.h"
#include "eval/results_json.h"
#include "nn/checkpoint.h"
#include "nn/model_registry.h"
#include "protocols/argv_peek.h"
#include "protocols/cfp_analysis.h"
#include "protocols/checkpoint_eval.h"
#include "protocols/class_columns.h"
#include "protocols/frl_errors.h"
#include "protocols/frl_violation.h"
#include "protocols/second_radius.h"
#include "report/run_data.h"
#include "tests/test_nn_util.h"

using namespace cw;
namespace fs = std::filesystem;

namespace {
// A results.json with two evaluations on three classes (only the fields the protocols read).
nlohmann::json tiny_results() {
    return {{"classes", {"a", "b", "c"}},
            {"evaluations",
             {{{"name", "clean"}, {"accuracy", 0.8}, {"per_class_accuracy", {0.9, 0.6, 0.9}}, {"cfp", {0.5, 0.0, 0.5}}},
              {{"name", "pgd20"},
               {"accuracy", 0.4},
               {"per_class_accuracy", {0.5, 0.1, 0.6}},
               {"per_class_boundary_error", {0.4, 0.5, 0.3}},
               {"cfp", {0.2, 0.1, 0.7}}},
              {{"name", "square100"},
               {"accuracy", 0.5},
               {"per_class_accuracy", {0.6, 0.2, 0.7}},
               {"per_class_boundary_error", {0.3, 0.4, 0.2}},
               {"cfp", {0.0, 0.3, 0.7}}}}}};
}
}  // namespace

TEST_CASE("frl violation: the largest violation over the classes, per epoch and constraint", "[experiments]") {
    // history.csv as the trainer writes it: state rows have an empty overall column; violations of both signs.
    const std::string csv =
        "epoch,eval,overall,a,b,c\n"
        "1,test_clean,0.5,0.4,0.5,0.6\n"
        "1,state_violation_nat,,-0.2,0.05,-0.01\n"
        "1,state_violation_bdy,,-0.3,-0.1,-0.07\n"
        "2,state_violation_nat,,-0.2,-0.05,-0.01\n"
        "2,state_violation_bdy,,0.12,0.3,0.3\n"
        "2,state_w_nat,,0.3,0.4,0.3\n";
    const util::CsvTable t = util::parse_csv(csv, "history.csv");
    const auto v = protocols::max_violations(t, "history.csv");
    REQUIRE(v.size() == 4);
    CHECK(v[0].epoch == 1);
    CHECK(v[0].constraint == "nat");
    CHECK(v[0].value == Approx(0.05));    // the one class violating, not the largest magnitude (-0.2)
    CHECK(v[0].cls == 1);
    CHECK(v[1].constraint == "bdy");
    CHECK(v[1].value == Approx(-0.07));   // all met: the largest is still negative
    CHECK(v[1].cls == 2);
    CHECK(v[2].value == Approx(-0.01));
    CHECK(v[3].value == Approx(0.3));
    CHECK(v[3].cls == 1);                 // tie between b and c: the lower index
    CHECK(protocols::history_classes(t) == std::vector<std::string>{"a", "b", "c"});

    const protocols::RunViolations run{"frl_rw", v};
    CHECK(protocols::max_violations_csv({run}, {"a", "b", "c"}) ==
          "run,epoch,constraint,max_violation,class\nfrl_rw,1,nat,0.05,b\nfrl_rw,1,bdy,-0.07,c\n"
          "frl_rw,2,nat,-0.01,c\nfrl_rw,2,bdy,0.3,b\n");
    const std::string md = protocols::max_violations_markdown(run, {"a", "b", "c"});
    CHECK(md.find("| 1 | 0.0500 (b) | -0.0700 (c) | no |") != std::string::npos);
    CHECK(md.find("| 2 | -0.0100 (c) | 0.3000 (b) | no |") != std::string::npos);

    // Not an FRL run: no violations, said so.
    const auto none = protocols::max_violations(util::parse_csv("epoch,eval,overall,a\n1,test_clean,0.5,0.5\n", "h"), "h");
    CHECK(none.empty());
    CHECK(protocols::max_violations_markdown({"pgd_at", none}, {"a"}) == "pgd_at: no constraint violations in history.csv\n");
    CHECK_THROWS_WITH(protocols::max_violations(util::parse_csv("epoch,eval,overall,a\n1,state_violation_nat,,x\n", "h.csv"), "h.csv"),
                      Catch::Contains("h.csv"));
}

TEST_CASE("frl errors: Table 1's average and worst-class errors from a results.json", "[experiments]") {
    const protocols::ErrorRow r = protocols::error_row("pgd_at", tiny_results(), "pgd20", "r.json");
    CHECK(r.avg_std == Approx(0.2));
    CHECK(r.worst_std == Approx(0.4));
    CHECK(r.worst_std_class == 1);
    CHECK(r.avg_bdy == Approx(0.4));
    CHECK(r.worst_bdy == Approx(0.5));
    CHECK(r.worst_bdy_class == 1);
    CHECK(r.avg_rob == Approx(0.6));
    CHECK(r.worst_rob == Approx(0.9));
    CHECK(r.worst_rob_class == 1);
    CHECK(protocols::error_table_markdown({r}, {"a", "b", "c"}) ==
          "| model | avg std | worst std | avg bdy | worst bdy | avg rob | worst rob |\n|---|---|---|---|---|---|---|\n"
          "| pgd_at | 20.0 | 40.0 (b) | 40.0 | 50.0 (b) | 60.0 | 90.0 (b) |\n");
    CHECK_THROWS_WITH(protocols::error_row("x", tiny_results(), "cw20", "r.json"), "r.json: no evaluation 'cw20'");
}

TEST_CASE("cfp analysis: top absorbing classes and agreement across attacks", "[experiments]") {
    CHECK(protocols::top_classes({0.1, 0.5, 0.0, 0.5, std::nan("")}, 3) == std::vector<int>{1, 3, 0});
    CHECK(protocols::top_classes({0, 0, 0}, 3).empty());   // no errors: nothing absorbs them
    const protocols::ModelCfp m = protocols::model_cfp("m", tiny_results());
    REQUIRE(m.evaluations == std::vector<std::string>{"clean", "pgd20", "square100"});
    const protocols::CfpAgreement a = protocols::cfp_agreement(m);
    REQUIRE(a.attacks == std::vector<std::string>{"pgd20", "square100"});
    // Ranks (1, 2, 3) against (2, 1, 3): ρ = 1 − 6·2/(3·8) = 0.5.
    CHECK(a.spearman[0][1] == Approx(0.5));
    CHECK(a.mean_spearman == Approx(0.5));
    CHECK(a.same_top1);
    CHECK(a.top3_common == 2);   // c and b; a has no false positives under square100
    const std::string md = protocols::cfp_markdown({m});
    CHECK(md.find("| pgd20 | 40.0 | c 70.0% | a 20.0% | b 10.0% | 1.00 |") != std::string::npos);
    CHECK(md.find("| square100 | 50.0 | c 70.0% | b 30.0% | – | 0.50 |") != std::string::npos);
    CHECK(md.find("mean 0.50") != std::string::npos);
    const std::string csv = protocols::cfp_csv({m});
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 3 * 3);
    CHECK(csv.find("m,pgd20,c,0.7,\n") != std::string::npos);   // no records: no CFP of the broken samples
    CHECK(md.find("Only the samples each attack broke") == std::string::npos);
}

TEST_CASE("cfp analysis: the CFP of the samples an attack broke, apart from the clean errors", "[experiments]") {
    // Six samples of three classes: two clean errors (both predicted c) that every attack keeps; attack 0 breaks
    // two samples into a and b, attack 1 breaks one into a.
    eval::EvalRecords r;
    r.index = {0, 1, 2, 3, 4, 5};
    r.label = {0, 1, 2, 0, 1, 0};
    r.clean_pred = {0, 1, 2, 2, 2, 0};
    r.attacks = {"pgd20", "fgsm"};
    r.adv_pred = {{0, 0, 1, 2, 2, 0}, {0, 1, 0, 2, 2, 0}};
    int64_t n = 0;
    CHECK(protocols::broken_cfp(r, 0, 3, &n) == std::vector<double>{0.5, 0.5, 0.0});
    CHECK(n == 2);
    CHECK(protocols::broken_cfp(r, 1, 3, &n) == std::vector<double>{1.0, 0.0, 0.0});
    CHECK(n == 1);
    const nlohmann::json results = {
        {"classes", {"a", "b", "c"}},
        {"evaluations",
         {{{"name", "clean"}, {"accuracy", 4.0 / 6}, {"cfp", {0.0, 0.0, 1.0}}},
          {{"name", "pgd20"}, {"accuracy", 2.0 / 6}, {"cfp", {0.25, 0.25, 0.5}}},
          {{"name", "fgsm"}, {"accuracy", 3.0 / 6}, {"cfp", {1.0 / 3, 0.0, 2.0 / 3}}}}}};
    const protocols::ModelCfp m = protocols::model_cfp("m", results, &r);
    REQUIRE(m.broken_cfp.size() == 3);
    CHECK(m.broken_cfp[0].empty());   // clean has no attack
    CHECK(m.broken == std::vector<int64_t>{0, 2, 1});
    // All errors: c absorbs most under both attacks (the clean errors); the broken samples go to a and b instead.
    CHECK(protocols::cfp_agreement(m).same_top1);
    const protocols::CfpAgreement b = protocols::cfp_agreement(m, true);
    CHECK(b.attacks == std::vector<std::string>{"pgd20", "fgsm"});
    CHECK(b.same_top1);   // a: the tie at 0.5 goes to the lower index
    CHECK(b.top3_common == 1);
    const std::string md = protocols::cfp_markdown({m});
    CHECK(md.find("| pgd20 | 33.3 | c 50.0% | a 25.0% | b 25.0% | 1.00 |") != std::string::npos);
    CHECK(md.find("| pgd20 | 2 | a 50.0% | b 50.0% | – | 1.00 |") != std::string::npos);
    CHECK(md.find("| fgsm | 1 | a 100.0% | – | – |") != std::string::npos);
    CHECK(protocols::cfp_csv({m}).find("m,fgsm,a,0.333333,1\n") != std::string::npos);
}

TEST_CASE("class columns: per-class and extremes tables", "[experiments]") {
    const auto r = tiny_results();
    const std::vector<protocols::ClassColumn> cols = {protocols::class_column("m clean", r, "clean", "r.json"),
                                                      protocols::class_column("m PGD-20", r, "pgd20", "r.json")};
    const std::vector<std::string> classes = {"a", "b", "c"};
    CHECK(protocols::per_class_markdown(classes, cols) ==
          "| class | m clean | m PGD-20 |\n|---|---|---|\n| a | 90.0 | 50.0 |\n| b | 60.0 | 10.0 |\n| c | 90.0 | 60.0 |\n"
          "| **average** | **80.0** | **40.0** |\n");
    CHECK(protocols::extremes_markdown(classes, cols).find("| m PGD-20 | 40.0 | 10.0 (b) | 60.0 (c) | 50.0 |") !=
          std::string::npos);
    CHECK(protocols::per_class_csv(classes, cols) == "class,m clean,m PGD-20\na,0.9,0.5\nb,0.6,0.1\nc,0.9,0.6\n");
    CHECK_THROWS_WITH(protocols::class_column("x", r, "fgsm", "r.json"), "r.json: no evaluation 'fgsm'");
}

TEST_CASE("argv peek and classes rule", "[experiments]") {
    const char* argv[] = {"bin", "--dataset", "gtsrb32", "--epochs", "2", "--dataset=cifar10"};
    CHECK(protocols::peek_flag(6, argv, "--dataset", "x") == "cifar10");
    CHECK(protocols::peek_flag(5, argv, "--dataset", "x") == "gtsrb32");
    CHECK(protocols::peek_flag(1, argv, "--dataset", "x") == "x");
    CHECK(protocols::classes_kept("--classes", "all", 43) == 0);
    CHECK(protocols::classes_kept("--classes", "top:17", 43) == 17);
    CHECK_THROWS_WITH(protocols::classes_kept("--classes", "top:1x", 43),
                      "--classes: expected all or top:K with 2 <= K <= 43, got 'top:1x'");
    CHECK(util::radius_text(4.f / 255) == "4/255");
    CHECK(protocols::second_radius_folder("last", 4.f / 255) == "eval_last_eps4");
}

TEST_CASE("second radius: a job's checkpoint evaluated again at another eps, contract results", "[experiments]") {
    cw_nn_test::ScratchDir dir;
    // A LeNet-5 checkpoint for the synthetic set, as a job writes it (architecture metadata included).
    nn::ModelConfig cfg;
    cfg.num_classes = 10;
    cfg.in_channels = 3;
    cfg.input_size = 32;
    auto model = nn::make_model("lenet5", cfg);
    nn::Metadata md = nn::checkpoint_metadata("lenet5", cfg, {"natural", 8.f / 255, 0});
    md["dataset"] = "synthetic";
    nn::save_model(*model, (dir.path / "last.safetensors").string(), md);
    train::JobConfig job;
    job.experiment = "second_radius_test";
    job.common.out = dir.path.string();
    job.common.device = "cpu";
    job.data.dataset = "synthetic";
    job.data.eval_n = 30;
    job.final_checkpoints = "last,best_robust";   // best_robust absent: skipped
    std::ostringstream log;
    const auto dirs = protocols::evaluate_second_radius(job, 4.f / 255, {"pgd20"}, log);
    REQUIRE(dirs.size() == 1);
    const nlohmann::json r = report::load_results_json(dirs[0] + "/results.json");   // checks the contract
    for (const std::string& f : eval::results_required_fields()) CHECK(r.contains(f));
    CHECK(r.at("num_examples") == 30);
    CHECK(r.at("experiment") == "second_radius_test");
    const nlohmann::json* pgd = report::find_evaluation(r, "pgd20");
    REQUIRE(pgd);
    CHECK(pgd->at("attack").at("eps").get<double>() == Approx(4.0 / 255));
    CHECK(pgd->at("attack").at("alpha").get<double>() == Approx(1.0 / 255));
    // With --resume a finished one is not evaluated again.
    job.common.resume = true;
    std::ostringstream again;
    protocols::evaluate_second_radius(job, 4.f / 255, {"pgd20"}, again);
    CHECK(again.str().find("exists; skipped") != std::string::npos);
    // A model of another class count is named with the rule that would fit.
    protocols::CheckpointEval c;
    c.weights = (dir.path / "last.safetensors").string();
    c.dataset = "synthetic";
    c.classes = "top:5";
    CHECK_THROWS_WITH(protocols::evaluate_checkpoint(c, log), Catch::Contains("the model has 10 classes, synthetic (top:5) has 5"));
}
