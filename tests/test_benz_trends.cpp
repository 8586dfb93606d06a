// protocols/class_trends on a hand-made history.csv (every number below worked out by hand), and
// experiments/benz_trends end to end on the synthetic set through its --quick path (tiny: LeNet-5, 300 images,
// three epochs): both arms' contract results.json, trends.json agreeing with history.csv, the links in summary.md,
// and --resume redoing nothing.
#include <catch2/catch.hpp>

#include <cmath>

#include "protocols/class_trends.h"
#include "util/csv.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;
using cw::protocols::analyse_trend;
using cw::protocols::history_series;

namespace {
// Three classes. test_clean's worst class per epoch: A, B, A, B, B (B and C tie at 0.5: the lower index), B —
// epoch 6 written twice, as a resumed run may, the later row counting. The first epoch-6 row would make A the worst.
const char* kHistory =
    "epoch,eval,overall,A,B,C\n"
    "1,train_adv,0.5,0.1,0.1,0.1\n"
    "1,test_clean,0.5,0.2,0.5,0.8\n"
    "1,test_pgd10,0.2,0.1,0.2,0.3\n"
    "2,train_loss,1.0,1,1,1\n"
    "2,test_clean,0.6,0.6,0.3,0.9\n"
    "2,test_pgd10,0.2,0.1,0.2,0.3\n"
    "3,test_clean,0.67,0.4,0.7,0.9\n"
    "3,state_weights,,1,2,3\n"
    "4,test_clean,0.63,0.8,0.5,0.6\n"
    "5,test_clean,0.63,0.9,0.5,0.5\n"
    "6,test_clean,0.63,0.1,0.9,0.9\n"
    "6,test_clean,0.73,0.9,0.6,0.7\n";

const char* kTinyTrends =
    "--quick --dataset synthetic --train-n 300 --eval-n 60 --epoch-eval-n 40 --epochs 3 --attack-steps 2 "
    "--eval-steps 2 --batch-size 50 --lr 0.003 --device cpu --seed 1";
}  // namespace

TEST_CASE("benz trends: the per-epoch series of a history.csv, training and state rows left out", "[benz]") {
    const auto table = cw::util::parse_csv(kHistory, "history.csv");
    const auto series = history_series(table, 3, "history.csv");
    REQUIRE(series.size() == 2);
    CHECK(series[0].eval == "test_clean");
    CHECK(series[1].eval == "test_pgd10");
    CHECK(series[0].epochs == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
    CHECK(series[0].per_class[5] == std::vector<double>{0.9, 0.6, 0.7});   // the later epoch-6 row
    CHECK(series[0].overall[5] == Approx(0.73));
    CHECK(series[1].epochs == std::vector<int64_t>{1, 2});
    CHECK_THROWS_WITH(history_series(table, 4, "h.csv"), Catch::Contains("h.csv: expected the columns"));
}

TEST_CASE("benz trends: worst class per epoch, its changes, the stable-from epoch, ρ and spread", "[benz]") {
    const auto series = history_series(cw::util::parse_csv(kHistory, "history.csv"), 3, "history.csv");
    const auto t = analyse_trend(series[0]);
    CHECK(t.worst == std::vector<int>{0, 1, 0, 1, 1, 1});
    CHECK(t.changes == 3);
    CHECK(t.change_epochs == std::vector<int64_t>{2, 3, 4});
    // B is the worst at the end and was the worst first at epoch 2, but it lost the place at epoch 3: stable from 4.
    CHECK(t.stable_from == 4);
    CHECK(t.distinct_worst == 2);
    CHECK(t.worst_accuracy[0] == Approx(0.2));
    CHECK(t.spread[0] == Approx(0.6));
    CHECK(t.spread[4] == Approx(0.4));
    CHECK(t.class_mean[1] == Approx(0.6));
    // Ranks (1,2,3) and (2,1,3): 1 − 6·2/(3·8) = 0.5; against the last (3,1,2): 1 − 6·6/24 = −0.5.
    CHECK(std::isnan(t.spearman_previous[0]));
    CHECK(t.spearman_previous[1] == Approx(0.5));
    CHECK(t.spearman_last[0] == Approx(-0.5));
    CHECK(t.spearman_last[3] == Approx(1.0));
    // Epoch 5 has a tie (ranks 3, 1.5, 1.5) against the last (3, 1, 2): Pearson of the ranks = 1.5/√3.
    CHECK(t.spearman_last[4] == Approx(1.5 / std::sqrt(3.0)));
    CHECK(t.spearman_last[5] == Approx(1.0));

    const auto robust = analyse_trend(series[1]);
    CHECK(robust.changes == 0);
    CHECK(robust.stable_from == 1);

    const nlohmann::json j = cw::protocols::trend_json(t, {"A", "B", "C"});
    CHECK(j.at("final_worst_class_name") == "B");
    CHECK(j.at("stable_from_epoch") == 4);
    CHECK(j.at("epochs")[0].at("spearman_previous").is_null());
    const std::string md = cw::protocols::trends_markdown("natural", {t, robust}, {"A", "B", "C"});
    CHECK(md.find("| test_clean | 6 | B | 4 | 3 (2, 3, 4) | 2 | -0.50 | 60.0 → 30.0 |") != std::string::npos);
    CHECK(md.find("| 5 | B (+1 tied) | 50.0 | 63.3 | 40.0 | 0.87 | 0.87 |") != std::string::npos);
    CHECK(t.tied == std::vector<int>{1, 1, 1, 1, 2, 1});
    CHECK(t.changes_at_ties == 0);   // epoch 5's tie is no change: B was the worst already

    // A change that only the tie rule decides is counted as such.
    const cw::protocols::ClassSeries tie{"test_clean", {1, 2}, {0.2, 0.53}, {{0.3, 0.1, 0.2}, {0.5, 0.5, 0.6}}};
    const auto at_tie = analyse_trend(tie);
    CHECK(at_tie.worst == std::vector<int>{1, 0});
    CHECK(at_tie.changes_at_ties == 1);
    CHECK(cw::protocols::trends_markdown("x", {at_tie}, {"A", "B", "C"}).find("| 1 (2), 1 at a tie |") != std::string::npos);
}

TEST_CASE("benz_trends: per-class trends of natural and PGD-AT training on the synthetic set", "[benz][experiments]") {
    const fs::path out = fresh_dir("cw_benz_trends_test");
    const Output o = run_experiment("benz_trends", std::string(kTinyTrends) + " --out " + out.string());
    INFO(o.text);
    REQUIRE(o.code == 0);
    const nlohmann::json trends = nlohmann::json::parse(read_text(out / "trends.json"));
    for (const std::string arm : {"natural", "pgd_at"}) {
        INFO(arm);
        const nlohmann::json r = contract_results(out / arm / "eval_last" / "results.json");
        CHECK(r.at("method") == arm);
        CHECK(r.at("model").at("arch") == "lenet5");   // from the --quick preset
        REQUIRE(trends.at("arms").contains(arm));
        const auto& series = trends.at("arms").at(arm);
        REQUIRE(series.size() == 2);         // test_clean and test_pgd2, every epoch
        CHECK(series[0].at("eval") == "test_clean");
        CHECK(series[1].at("eval") == "test_pgd2");
        // The last epoch's worst class, recomputed from history.csv here.
        const auto h = cw::util::parse_csv(read_text(out / arm / "history.csv"), "history.csv");
        for (const auto& s : series) {
            CHECK(s.at("evaluated_epochs") == 3);
            const std::vector<std::string>* last = nullptr;
            for (const auto& row : h.rows)
                if (row[1] == s.at("eval").get<std::string>() && row[0] == "3") last = &row;
            REQUIRE(last);
            int worst = 0;
            for (int k = 1; k < 10; ++k)
                if (std::stod((*last)[3 + k]) < std::stod((*last)[3 + worst])) worst = k;
            CHECK(s.at("final_worst_class") == worst);
            CHECK(s.at("epochs")[2].at("spearman_last").get<double>() == Approx(1.0));
        }
    }
    const std::string md = read_text(out / "trends.md");
    CHECK(md.find("## natural") != std::string::npos);
    CHECK(md.find("### pgd_at, test_pgd2 per epoch") != std::string::npos);
    const std::string summary = read_text(out / "summary.md");
    CHECK(summary.find("| natural |") != std::string::npos);
    CHECK(summary.find("## Benz et al. §3.1: trends and Figures 1-2") != std::string::npos);
    CHECK(summary.find("[trends.md](trends.md)") != std::string::npos);
    // The tests run without gnuplot: the summary says where the figures would be.
    CHECK(summary.find("- Fig. 1, natural: no figures") != std::string::npos);
    CHECK(summary.find("- Fig. 2, pgd_at: no figures") != std::string::npos);

    const Output again = run_experiment("benz_trends", std::string(kTinyTrends) + " --resume --out " + out.string());
    INFO(again.text);
    REQUIRE(again.code == 0);
    CHECK(again.text.find("pgd_at finished before; skipped") != std::string::npos);
    CHECK(again.text.find("epoch 1/") == std::string::npos);
    CHECK(read_text(out / "trends.md") == md);
    // The section is appended to the study's fresh summary, not to the previous one.
    const std::string summary2 = read_text(out / "summary.md");
    CHECK(summary2.find("## Benz et al. §3.1") == summary2.rfind("## Benz et al. §3.1"));
    fs::remove_all(out);
}

TEST_CASE("benz_trends: --help lists the common, job and method flags", "[benz][experiments]") {
    const Output o = run_experiment("benz_trends", "--help");
    REQUIRE(o.code == 0);
    for (const std::string& f : expected_help_flags()) CHECK(o.text.find(f) != std::string::npos);
    CHECK(o.text.find("resnet18") != std::string::npos);
}
