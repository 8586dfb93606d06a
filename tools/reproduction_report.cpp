// reproduction_report: docs/reproduction.md from the committed result files of the reproduction study
// (scripts/reproduction.sh): the pilot's two criteria, every arm's per-seed summary, each paper claim as a paired
// effect over seeds with its 95% interval and verdict (report/claims.h), and whether the PGD-20 picture holds under
// AutoAttack. Reads only results.json and history.csv files, so the page can be rebuilt anywhere without training.
//
//   build/tools/reproduction_report --results results/reproduction --out docs/reproduction.md
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/common_flags.h"
#include "util/atomic_file.h"
#include "util/csv.h"
#include "util/flags.h"
#include "util/format.h"
#include "eval/agreement.h"
#include "report/claims.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using cw::report::Verdict;
using cw::util::fixed;

// One evaluation of one checkpoint of one run, reduced to the numbers the claims use (fractions in [0, 1]).
struct Eval {
    std::vector<double> per_class;
    std::vector<double> boundary;  // per-class boundary error (robust evaluations only)
    double overall = NAN;
};
struct Run {
    std::map<std::string, std::map<std::string, Eval>> evals;  // checkpoint -> evaluation name -> numbers
    // From selection.json, for runs that average with FAWA: how many epochs it accepted. FAWA averages only epochs
    // whose worst validation class reaches its threshold; none accepted means no averaged model (no ema_last).
    std::optional<int> fawa_accepted;
    std::string cpu;  // the first line of cpu.txt: the processor that trained the run ("" where not recorded)
    // A hot start retrained on another CPU after its machine was lost (scripts/reproduction.sh): seed<k>/hot_start/,
    // the model the fine-tunes of this seed started from where it differs from the committed run.
    std::shared_ptr<const Run> hot_start;
    bool from_retrained_hot_start = false;  // a fine-tune that started from that model (its hot_start.txt)
    // The model's identity: a retrained hot start's checksum (checkpoint.sha256), and the checksum a fine-tune's
    // hot_start.txt names ("checkpoint sha256: ..."); "" where not recorded (records written before checksums).
    std::string checkpoint_sha256;
    std::string hot_start_sha256;
};
using Arm = std::map<int, Run>;  // seed -> run

double min_of(const std::vector<double>& v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return v.empty() ? NAN : *std::max_element(v.begin(), v.end()); }

std::map<std::string, Eval> load_results(const fs::path& file, std::vector<std::string>& classes) {
    json j;
    try {
        j = json::parse(cw::util::read_file_text(file.string()));
    } catch (const json::exception& e) {
        throw std::runtime_error(file.string() + ": not a results.json (" + e.what() + ")");
    }
    if (!j.contains("evaluations") || !j.contains("classes"))
        throw std::runtime_error(file.string() + ": not a results.json (no evaluations / classes)");
    const auto names = j["classes"].get<std::vector<std::string>>();
    if (classes.empty()) classes = names;
    if (names != classes) throw std::runtime_error(file.string() + ": its classes differ from the other runs'");
    std::map<std::string, Eval> out;
    for (const auto& e : j["evaluations"]) {
        Eval ev;
        ev.overall = e.value("accuracy", NAN);
        for (const auto& x : e["per_class_accuracy"]) ev.per_class.push_back(x.is_number() ? x.get<double>() : NAN);
        if (e.contains("per_class_boundary_error"))
            for (const auto& x : e["per_class_boundary_error"]) ev.boundary.push_back(x.is_number() ? x.get<double>() : NAN);
        out[e["name"].get<std::string>()] = ev;
    }
    return out;
}

// One run's folder: eval_<checkpoint>/results.json, autoattack/results.json, selection.json, cpu.txt,
// hot_start.txt and hot_start/ (a folder of the same kind).
Run load_run(const fs::path& dir, std::vector<std::string>& classes) {
    Run run;
    for (const auto& eval_dir : fs::directory_iterator(dir)) {
        const std::string e = eval_dir.path().filename().string();
        const fs::path file = eval_dir.path() / "results.json";
        if (!fs::is_regular_file(file)) continue;
        if (e.rfind("eval_", 0) == 0) run.evals[e.substr(5)] = load_results(file, classes);
        if (e == "autoattack") run.evals["autoattack"] = load_results(file, classes);
    }
    const fs::path selection = dir / "selection.json";
    if (!run.evals.empty() && fs::is_regular_file(selection)) {
        try {
            const json j = json::parse(cw::util::read_file_text(selection.string()));
            if (j.contains("fawa")) run.fawa_accepted = j["fawa"].at("accepted").get<int>();
        } catch (const json::exception& e) {
            throw std::runtime_error(selection.string() + ": not a selection.json (" + e.what() + ")");
        }
    }
    if (fs::is_regular_file(dir / "cpu.txt")) {
        std::istringstream text(cw::util::read_file_text((dir / "cpu.txt").string()));
        std::getline(text, run.cpu);
    }
    run.from_retrained_hot_start = fs::is_regular_file(dir / "hot_start.txt");
    if (run.from_retrained_hot_start) {
        std::istringstream text(cw::util::read_file_text((dir / "hot_start.txt").string()));
        const std::string key = "checkpoint sha256: ";
        for (std::string line; std::getline(text, line);)
            if (line.rfind(key, 0) == 0) run.hot_start_sha256 = line.substr(key.size());
    }
    if (fs::is_regular_file(dir / "checkpoint.sha256")) {
        std::istringstream text(cw::util::read_file_text((dir / "checkpoint.sha256").string()));
        text >> run.checkpoint_sha256;
    }
    if (fs::is_directory(dir / "hot_start")) {
        Run hot = load_run(dir / "hot_start", classes);
        if (!hot.evals.empty()) run.hot_start = std::make_shared<const Run>(std::move(hot));
    }
    return run;
}

// results/<dataset>/<arm>/seed<k>/, each a run folder (load_run)
std::map<std::string, Arm> load_arms(const fs::path& dir, std::vector<std::string>& classes) {
    std::map<std::string, Arm> arms;
    if (!fs::is_directory(dir)) return arms;
    for (const auto& arm_dir : fs::directory_iterator(dir)) {
        if (!arm_dir.is_directory()) continue;
        for (const auto& seed_dir : fs::directory_iterator(arm_dir.path())) {
            const std::string name = seed_dir.path().filename().string();
            if (name.rfind("seed", 0) != 0) continue;
            Run run = load_run(seed_dir.path(), classes);
            if (!run.evals.empty()) arms[arm_dir.path().filename().string()][std::stoi(name.substr(4))] = std::move(run);
        }
    }
    return arms;
}

// The metrics the claims read, of one run at one checkpoint; NaN where the evaluation is missing.
double metric(const Run& run, const std::string& checkpoint, const std::string& name) {
    auto c = run.evals.find(checkpoint);
    if (c == run.evals.end()) return NAN;
    auto eval = [&](const char* which) -> const Eval* {
        auto it = c->second.find(which);
        return it == c->second.end() ? nullptr : &it->second;
    };
    const Eval* clean = eval("clean");
    const Eval* pgd = eval("pgd20");
    if (name == "clean" && clean) return 100 * clean->overall;
    if (name == "clean worst" && clean) return 100 * min_of(clean->per_class);
    if (name == "clean spread" && clean) return 100 * (max_of(clean->per_class) - min_of(clean->per_class));
    if (name == "PGD-20" && pgd) return 100 * pgd->overall;
    if (name == "PGD-20 worst" && pgd) return 100 * min_of(pgd->per_class);
    if (name == "PGD-20 spread" && pgd) return 100 * (max_of(pgd->per_class) - min_of(pgd->per_class));
    if (name == "boundary worst" && pgd) return 100 * max_of(pgd->boundary);
    return NAN;
}

std::string mean_sd(const std::vector<double>& v) {
    if (v.empty()) return "—";
    const auto e = cw::report::paired_effect(v);
    return v.size() < 2 ? fixed(e.mean) : fixed(e.mean) + " ± " + fixed(e.sd);  // one seed has no spread to show
}

// A claim the study can test: arm against base at one checkpoint each, on one metric, in the paper's direction.
struct ClaimSpec {
    std::string text, source, arm, arm_checkpoint, base, base_checkpoint, metric;
    int direction = +1;
    std::optional<double> paper_size;
    std::optional<double> floor;  // a bound claim instead of a direction (judge_at_least)
    std::string paper_value;
};

const std::vector<ClaimSpec>& claims() {
    static const std::vector<ClaimSpec> list = {
        {"Adversarial training widens the gap between classes (clean accuracy, best − worst class)",
         "Benz et al. §3; Xu et al. §2", "pgd_at", "last", "natural", "last", "clean spread", +1, std::nullopt,
         std::nullopt, "CIFAR-10 PRN-18: natural ≈ 90 ± 5 per class; PGD-AT 94 (car) vs 67 (cat) clean"},
        {"FRL Reweight+Remargin lifts the worst class's robust accuracy", "Xu et al. §5 (Tables 1–2, GTSRB too)",
         "frl_rwrm", "last", "pgd_at", "last", "PGD-20 worst", +1, std::nullopt, std::nullopt,
         "worst-class robust error ≈ 10 points lower than PGD-AT (CIFAR-10)"},
        {"… at a cost of at most 3 points of average robust accuracy", "Xu et al. §5", "frl_rwrm", "last", "pgd_at",
         "last", "PGD-20", +1, std::nullopt, -3.0, "1–3 points of robust error, 1–2 of clean error"},
        {"FRL Reweight alone lifts the worst class's clean accuracy", "Xu et al. §5", "frl_rw", "last", "pgd_at",
         "last", "clean worst", +1, std::nullopt, std::nullopt, "best worst-class clean error of the FRL variants"},
        {"… but lowers the worst class's boundary error less than Reweight+Remargin", "Xu et al. §5", "frl_rw", "last",
         "frl_rwrm", "last", "boundary worst", +1, std::nullopt, std::nullopt,
         "Reweight does not fix boundary error; Reweight+Remargin is the most effective"},
        {"CFA (AT base, CCM + FAWA) lifts the worst class's robust accuracy", "Wei et al. Table 1", "cfa_at",
         "ema_last", "pgd_at", "last", "PGD-20 worst", +1, 5.0, std::nullopt, "AA worst class, last: 15.5 → 20.5"},
        {"… at a small average cost (at most 1 point)", "Wei et al. Table 1", "cfa_at", "ema_last", "pgd_at", "last",
         "PGD-20", +1, std::nullopt, -1.0, "AA average, last: 43.0 → 47.7 (a gain)"},
        {"CFA (TRADES base, CCM + CCR + FAWA) lifts the worst class's robust accuracy", "Wei et al. Table 1",
         "cfa_trades", "ema_last", "trades", "last", "PGD-20 worst", +1, 3.0, std::nullopt,
         "AA worst class, last: 18.5 → 21.5"},
        // CFA's training without its averaging: the run's own last model (Wei et al.'s Table 2 ablation). It is
        // testable where FAWA accepts no epoch and so leaves no averaged model (GTSRB-17 at this scale).
        {"CCM alone (CFA's class-wise budgets, its last model without averaging) lifts the worst class's robust "
         "accuracy", "Wei et al. Table 2 (ablation)", "cfa_at", "last", "pgd_at", "last", "PGD-20 worst", +1, 2.7,
         std::nullopt, "AA worst class, best: AT 20.1 → AT + CCM 22.8"},
        {"CCM + CCR (CFA's TRADES training, its last model without averaging) lift the worst class's robust accuracy",
         "Wei et al. Table 2 (ablation)", "cfa_trades", "last", "trades", "last", "PGD-20 worst", +1, 2.1,
         std::nullopt, "AA worst class, best: TRADES 21.7 → + CCM + CCR 23.8"},
        {"FAWA beats plain EMA on the worst class (same CFA training)", "Wei et al. Table 3", "cfa_at", "ema_last",
         "cfa_at_ema", "ema_last", "PGD-20 worst", +1, 1.8, std::nullopt, "AA worst class: EMA 21.3, FAWA 23.1"},
        {"FAIR-TAT lifts the worst class's clean accuracy", "Medi et al. (FAIR-TAT) §5", "fair_tat", "last", "pgd_at",
         "last", "clean worst", +1, std::nullopt, std::nullopt, "higher worst-class clean accuracy than AT (tables lost)"},
        {"… and keeps average robust accuracy within about a point of its base", "Medi et al. (FAIR-TAT) §5",
         "fair_tat", "last", "pgd_at", "last", "PGD-20", +1, std::nullopt, -1.0,
         "overall PGD nearly equal (slight drop on CIFAR-10)"},
        {"EMA on FAIR-TAT lifts the worst class's robust accuracy", "Medi et al. (FAIR-TAT) §5", "fair_tat_ema",
         "ema_last", "fair_tat", "last", "PGD-20 worst", +1, std::nullopt, std::nullopt,
         "FAIR-TAT + EMA among the best worst-class rows"},
    };
    return list;
}

// The arm a fine-tune starts from (its hot start): PGD-AT for FRL, TRADES for FAAL; "" for the others.
std::string hot_start_arm_of(const std::string& arm) {
    if (arm.rfind("frl_", 0) == 0) return "pgd_at";
    return arm == "faal" ? "trades" : "";
}

// The base run a seed of the arm is compared with. A fine-tune that started from a retrained hot start is compared
// with that model, not with the committed run of its seed (another CPU's model); two runs of which only one started
// from it are not a pair (nullptr).
const Run* partner(const std::string& arm_name, const Run& run, const std::string& base_name, const Run& base, int seed) {
    if (hot_start_arm_of(arm_name) == base_name) {
        if (!run.from_retrained_hot_start) return &base;
        const std::string record = base_name + "/seed" + std::to_string(seed) + "/hot_start/";
        if (!base.hot_start)
            throw std::runtime_error(arm_name + " seed " + std::to_string(seed) + " started from a retrained hot start "
                                     "(hot_start.txt) but " + record + " has no evaluation");
        // A later machine's retraining replaced the record: it describes another model than this one started from.
        const std::string& recorded = base.hot_start->checkpoint_sha256;
        if (!run.hot_start_sha256.empty() && run.hot_start_sha256 != recorded)
            throw std::runtime_error(arm_name + " seed " + std::to_string(seed) + " started from the retrained model with "
                                     "checkpoint sha256 " + run.hot_start_sha256.substr(0, 12) + " but " + record +
                                     " records " + (recorded.empty() ? "no checksum" : recorded.substr(0, 12)));
        return base.hot_start.get();
    }
    return run.from_retrained_hot_start == base.from_retrained_hot_start ? &base : nullptr;
}

// A claim's paired values over seeds: its arm's metric against its base's (partner); seeds where either value is
// missing are left out.
std::vector<std::pair<double, double>> claim_pairs(const ClaimSpec& c, const Arm& arm, const Arm& base) {
    std::vector<std::pair<double, double>> pairs;
    for (const auto& [seed, run] : arm) {
        auto b = base.find(seed);
        if (b == base.end()) continue;
        const Run* other = partner(c.arm, run, c.base, b->second, seed);
        if (!other) continue;
        const double x = metric(run, c.arm_checkpoint, c.metric), y = metric(*other, c.base_checkpoint, c.metric);
        if (!std::isnan(x) && !std::isnan(y)) pairs.emplace_back(x, y);
    }
    return pairs;
}

std::vector<double> differences(const ClaimSpec& c, const Arm& arm, const Arm& base) {
    std::vector<double> d;
    for (const auto& [x, y] : claim_pairs(c, arm, base)) d.push_back(x - y);
    return d;
}

// Whether a worst-class metric is 0 in every paired run of both arms: the floor of the scale (GTSRB-17's
// speed-limit signs), where "no lift" says nothing about a method beyond that it could not lift a class from 0.
bool both_at_zero(const ClaimSpec& c, const Arm& arm, const Arm& base) {
    if (c.metric.find("worst") == std::string::npos) return false;
    const auto pairs = claim_pairs(c, arm, base);
    for (const auto& [x, y] : pairs)
        if (x != 0.0 || y != 0.0) return false;
    return !pairs.empty();
}

// The arm's seeds, comma-separated; with `only`, those whose run it accepts.
std::string seeds_of(const Arm& arm, bool (*only)(const Run&) = nullptr) {
    std::string s;
    for (const auto& [seed, run] : arm)
        if (!only || only(run)) s += (s.empty() ? "" : ",") + std::to_string(seed);
    return s;
}

// The seeds of an arm whose FAWA accepted no epoch, so they have no averaged model ("" when there are none).
std::string seeds_without_average(const Arm& arm) {
    return seeds_of(arm, [](const Run& run) { return run.fawa_accepted == 0; });
}

std::string seeds_text(const std::string& list) {
    return (list.find(',') == std::string::npos ? "seed " : "seeds ") + list;
}

struct PilotRows {
    std::vector<double> worst, change;  // per seed: worst-class PGD-20 of the last checkpoint; |last-two-epoch change|
};

// One table row per seed of the PGD-AT arm (loaded from runs/pgd_at/seed<k>): its test PGD-20, worst class, and the
// per-epoch PGD-20 of its last two epochs (history.csv).
PilotRows pilot_table(std::ostream& md, const Arm& arm, const std::vector<std::string>& classes, const fs::path& runs) {
    md << "| seed | PGD-20 (test) | worst class | worst-class PGD-20 | last two epochs: per-epoch PGD-20 | change |\n"
          "|---|---|---|---|---|---|\n";
    PilotRows rows;
    for (const auto& [seed, run] : arm) {
        const double w = metric(run, "last", "PGD-20 worst");
        std::string worst_name = "—";
        auto c = run.evals.find("last");
        if (c != run.evals.end() && c->second.count("pgd20")) {
            const auto& pc = c->second.at("pgd20").per_class;
            worst_name = classes[std::min_element(pc.begin(), pc.end()) - pc.begin()];
        }
        // history.csv: rows "epoch,test_pgd<K>,overall,..." of the per-epoch evaluation.
        std::vector<double> per_epoch;
        const std::string history = (runs / "pgd_at" / ("seed" + std::to_string(seed)) / "history.csv").string();
        if (std::filesystem::exists(history)) {
            const cw::util::CsvTable t = cw::util::parse_csv(cw::util::read_file_text(history), history);
            const int eval = t.column("eval"), overall = t.column("overall");
            if (eval < 0 || overall < 0) throw std::runtime_error(history + ": expected the columns eval and overall");
            for (const auto& row : t.rows)
                if (row[eval].rfind("test_pgd", 0) == 0) per_epoch.push_back(100 * cw::util::csv_number(row[overall], history));
        }
        const double delta = per_epoch.size() >= 2 ? per_epoch.back() - per_epoch[per_epoch.size() - 2] : NAN;
        rows.worst.push_back(w);
        if (!std::isnan(delta)) rows.change.push_back(std::fabs(delta));
        md << "| " << seed << " | " << fixed(metric(run, "last", "PGD-20")) << " | " << worst_name << " | " << fixed(w)
           << " | "
           << (per_epoch.size() >= 2 ? fixed(per_epoch[per_epoch.size() - 2]) + " → " + fixed(per_epoch.back()) : "—")
           << " | " << fixed(delta, 1, true) << " |\n";
    }
    return rows;
}

// The pilot's criteria are judged on the study's own PGD-AT runs once it has some (scripts/reproduction.sh trains
// the pilot as the study's PGD-AT seeds, under the study's convolution setting); the runs under results/pilot/, made
// before the study fixed that setting, are shown beside them and decide only while the study has none.
void pilot_section(std::ostream& md, const fs::path& results, const std::string& dataset) {
    const fs::path study = results / dataset, early = results / "pilot" / dataset;
    md << "\n### " << dataset << "\n\n";
    std::vector<std::string> study_classes, early_classes;
    const auto study_arms = load_arms(study, study_classes), early_arms = load_arms(early, early_classes);
    const auto study_pgd = study_arms.find("pgd_at"), early_pgd = early_arms.find("pgd_at");
    std::optional<PilotRows> judged;
    if (study_pgd != study_arms.end()) {
        md << "The study's PGD-AT runs (the pilot's seeds 0–2 and the study's further seeds):\n\n";
        judged = pilot_table(md, study_pgd->second, study_classes, study);
    }
    if (early_pgd != early_arms.end()) {
        md << (judged ? "\n" : "") << "Pilot runs made before the study fixed its convolution setting (native convolutions"
           << (judged ? "; shown, not judged" : "") << "):\n\n";
        const PilotRows rows = pilot_table(md, early_pgd->second, early_classes, early);
        if (!judged) judged = rows;
    }
    if (!judged) {
        md << "No pilot runs committed yet.\n";
        return;
    }
    const auto w = cw::report::paired_effect(judged->worst);
    const double max_change = judged->change.empty() ? NAN : max_of(judged->change);
    const size_t n = judged->worst.size();
    md << "\nCriterion (a), worst class at least 10% PGD-20 on average: " << fixed(w.mean) << "% over " << n
       << (n == 1 ? " seed — " : " seeds — ") << (n == 0 ? "not measured yet" : w.mean >= 10 ? "met" : "**not met**")
       << ". Criterion (b), the last two epochs within one point: largest change " << fixed(max_change) << " — "
       << (std::isnan(max_change) ? "not measured yet" : max_change < 1 ? "met" : "**not met**") << ".\n";
}

void dataset_section(std::ostream& md, const fs::path& results, const std::string& dataset) {
    std::vector<std::string> classes;
    const auto arms = load_arms(results / dataset, classes);
    md << "\n## " << dataset << "\n\n";
    if (arms.empty()) {
        md << "No finished runs committed yet.\n";
        return;
    }
    md << "### Every arm (mean ± sample sd over seeds, %; the last checkpoint, and for the weight-averaging arms their "
          "averaged model, ema_last)\n\n"
          "| arm | seeds | checkpoint | clean | clean worst | PGD-20 | PGD-20 worst | PGD-20 spread | boundary error worst |\n"
          "|---|---|---|---|---|---|---|---|---|\n";
    auto rows = [&](const std::string& label, const Arm& arm) {
        for (const std::string ckpt : {"last", "ema_last"}) {
            std::map<std::string, std::vector<double>> cols;
            for (const auto& [seed, run] : arm)
                for (const char* m : {"clean", "clean worst", "PGD-20", "PGD-20 worst", "PGD-20 spread", "boundary worst"}) {
                    const double v = metric(run, ckpt, m);
                    if (!std::isnan(v)) cols[m].push_back(v);
                }
            if (cols.empty()) continue;
            md << "| " << label << " | " << seeds_of(arm) << " | " << ckpt << " | " << mean_sd(cols["clean"]) << " | "
               << mean_sd(cols["clean worst"]) << " | " << mean_sd(cols["PGD-20"]) << " | "
               << mean_sd(cols["PGD-20 worst"]) << " | " << mean_sd(cols["PGD-20 spread"]) << " | "
               << mean_sd(cols["boundary worst"]) << " |\n";
        }
    };
    // The retrained hot starts (scripts/reproduction.sh), each the model its seed's fine-tunes started from.
    std::map<std::string, Arm> retrained;
    for (const auto& [name, arm] : arms) {
        rows(name, arm);
        for (const auto& [seed, run] : arm)
            if (run.hot_start) retrained[name][seed] = *run.hot_start;
        if (retrained.count(name)) rows(name + " (retrained hot start)", retrained[name]);
    }

    for (const auto& [name, arm] : arms)
        if (const std::string seeds = seeds_without_average(arm); !seeds.empty())
            md << "\n" << name << ": FAWA accepted no epoch in " << seeds_text(seeds)
               << " (the worst validation class never reached its threshold): no averaged model (ema_last), only the "
                  "last one.\n";

    md << "\n### The claims\n\nEffect = arm − base per seed (points), mean and 95% t interval over the seeds both arms "
          "have.\n\n| claim | source | arm vs base | metric | effect [95% CI] (n) | paper | verdict |\n"
          "|---|---|---|---|---|---|---|\n";
    for (const auto& c : claims()) {
        auto a = arms.find(c.arm), b = arms.find(c.base);
        std::string effect = "not run yet", verdict = "—";
        if (a != arms.end() && b != arms.end()) {
            const auto d = differences(c, a->second, b->second);
            const auto e = cw::report::paired_effect(d);
            // Seeds left without an averaged model by FAWA, on either side: they cannot enter the comparison.
            std::string no_average;
            for (const auto& [arm, ckpt] : {std::pair{&a->second, &c.arm_checkpoint}, {&b->second, &c.base_checkpoint}})
                if (*ckpt == "ema_last" && no_average.empty()) no_average = seeds_without_average(*arm);
            const std::string fawa_note =
                "FAWA accepted no epoch in " + seeds_text(no_average) + " (its worst validation class stayed under FAWA's "
                "threshold), so there is no averaged model";
            if (e.n == 0 && !no_average.empty()) {
                effect = fawa_note;
                verdict = "**undecided** (untestable at this scale while FAWA accepts no epoch; the CCM rows judge "
                          "the same training on its last model)";
            }
            if (e.n > 0) {
                effect = fixed(e.mean, 1, true) + " [" + fixed(e.lo, 1, true) + ", " + fixed(e.hi, 1, true) + "] (" +
                         std::to_string(e.n) + ")" + (no_average.empty() ? "" : "; left out: " + fawa_note);
                const Verdict v = c.floor ? cw::report::judge_at_least(e, *c.floor)
                                          : cw::report::judge(e, {c.direction, c.paper_size});
                verdict = "**" + cw::report::verdict_name(v) + "**";
                if (both_at_zero(c, a->second, b->second)) {
                    verdict += " (the worst class is at 0% in every run of both arms: the floor this scale leaves, "
                               "no room to show a lift)";
                } else if (v == Verdict::undecided && e.n < 2) {
                    verdict += " (one seed: no spread to judge it by yet)";
                } else if (v == Verdict::undecided && !c.floor) {
                    const auto n = cw::report::seeds_to_decide(e.mean, e.sd);
                    verdict += n ? " (about " + std::to_string(*n) + " seeds would decide it at this mean and sd)"
                                 : " (no seed count would: the effect is within its noise)";
                }
            }
        }
        md << "| " << c.text << " | " << c.source << " | " << c.arm << " (" << c.arm_checkpoint << ") vs " << c.base
           << " (" << c.base_checkpoint << ") | " << c.metric << (c.floor ? " ≥ " + fixed(*c.floor, 0) : "") << " | "
           << effect << " | " << c.paper_value << " | " << verdict << " |\n";
    }

    for (const auto& [name, arm] : retrained)
        for (const auto& [seed, run] : arm) {
            std::string tunes;
            for (const auto& [tune, tune_arm] : arms)
                if (hot_start_arm_of(tune) == name && tune_arm.count(seed) && tune_arm.at(seed).from_retrained_hot_start)
                    tunes += (tunes.empty() ? "" : ", ") + tune;
            md << "\n" << name << " seed " << seed << " was retrained" << (run.cpu.empty() ? "" : " on " + run.cpu)
               << " after the machine that trained it was lost, and evaluates differently from its committed record "
                  "(another CPU's float rounding): "
               << (tunes.empty() ? "no fine-tune started from it yet" : tunes + " seed " + std::to_string(seed) +
                                                                            " started from it and " +
                                                                            (tunes.find(',') == std::string::npos ? "is" : "are") +
                                                                            " compared with it, not with the committed run")
               << "; every other claim uses the committed run.\n";
        }

    // Benz et al.: the weakest classes are the same across seeds and methods. Every run's per-class PGD-20 accuracy
    // (last checkpoint) against the mean ranking of the PGD-AT seeds.
    auto base = arms.find("pgd_at");
    if (base != arms.end()) {
        // The reference ranking: the mean per-class PGD-20 accuracy of the PGD-AT seeds, leaving out the run
        // compared (a PGD-AT seed is never compared with itself).
        auto reference = [&](const std::string& arm_name, int left_out) {
            std::vector<double> sum(classes.size(), 0.0);
            int count = 0;
            for (const auto& [seed, run] : base->second)
                if (!(arm_name == "pgd_at" && seed == left_out) && run.evals.count("last") &&
                    run.evals.at("last").count("pgd20")) {
                    const auto& pc = run.evals.at("last").at("pgd20").per_class;
                    for (size_t k = 0; k < pc.size(); ++k) sum[k] += pc[k];
                    ++count;
                }
            return count > 0 ? sum : std::vector<double>{};
        };
        std::vector<double> rho;
        std::map<std::string, int> worst_count;
        for (const auto& [name, arm] : arms) {
            if (name == "natural") continue;  // natural training has no robust accuracy to rank
            for (const auto& [seed, run] : arm)
                if (run.evals.count("last") && run.evals.at("last").count("pgd20")) {
                    const auto& pc = run.evals.at("last").at("pgd20").per_class;
                    const auto ref = reference(name, seed);
                    if (!ref.empty()) rho.push_back(cw::fairness::spearman(pc, ref));
                    ++worst_count[classes[std::min_element(pc.begin(), pc.end()) - pc.begin()]];
                }
        }
        if (!rho.empty()) {
            const auto e = cw::report::paired_effect(rho);
            std::string modal;
            int modal_n = 0, total = 0;
            for (const auto& [cls, n] : worst_count) {
                total += n;
                if (n > modal_n) modal = cls, modal_n = n;
            }
            md << "\n**The same classes are the weakest across seeds and methods** (Benz et al.): Spearman ρ of each "
                  "adversarially trained run's per-class PGD-20 accuracy against the PGD-AT seeds' mean, over "
               << e.n << (e.n == 1 ? " run: " : " runs: ") << fixed(e.mean, 2) << " [" << fixed(std::max(e.lo, -1.0), 2)
               << ", " << fixed(std::min(e.hi, 1.0), 2) << "]" << (e.lo < -1 || e.hi > 1 ? " (the t interval, cut at ±1)" : "")
               << "; the worst class is " << modal << " in " << modal_n << " of " << total
               << " runs. Verdict: **" << cw::report::verdict_name(cw::report::judge_at_least(e, 0.5))
               << "** (reproduced when the interval lies above ρ = 0.5; undecided with fewer than two runs).\n";
        }
    }

    // AutoAttack on one seed per arm (seed 0, or the lowest seed attacked where a machine lost seed 0's checkpoints):
    // does the PGD-20 ranking of the classes hold under the stronger attack, and that of the methods (by overall and
    // by worst-class robust accuracy)? Each model is compared with its own PGD-20 evaluation.
    std::ostringstream aa;
    std::vector<double> aa_overall, pgd_overall, aa_worst, pgd_worst;
    for (const auto& [name, arm] : arms) {
        auto attacked = std::find_if(arm.begin(), arm.end(), [](const auto& seed_run) {
            const auto& evals = seed_run.second.evals;
            return evals.count("autoattack") && evals.at("autoattack").count("autoattack") && evals.count("last") &&
                   evals.at("last").count("pgd20");
        });
        if (attacked == arm.end()) continue;
        const auto& a = attacked->second.evals.at("autoattack");
        const auto& l = attacked->second.evals.at("last");
        const auto& pa = a.at("autoattack").per_class;
        aa << "| " << name << " | " << attacked->first << " | " << fixed(100 * a.at("autoattack").overall) << " | "
           << fixed(100 * min_of(pa))
           << " (" << classes[std::min_element(pa.begin(), pa.end()) - pa.begin()] << ") | "
           << fixed(cw::fairness::spearman(pa, l.at("pgd20").per_class), 2) << " |\n";
        aa_overall.push_back(a.at("autoattack").overall), pgd_overall.push_back(l.at("pgd20").overall);
        aa_worst.push_back(min_of(pa)), pgd_worst.push_back(min_of(l.at("pgd20").per_class));
    }
    if (!aa.str().empty()) {
        md << "\n### AutoAttack (standard cascade, first 1,000 test images, one seed per arm, last checkpoint)\n\n"
              "| arm | seed | AA | AA worst class | Spearman ρ with PGD-20 per class (whole test set) |\n"
              "|---|---|---|---|---|\n"
           << aa.str();
        if (aa_overall.size() >= 3)
            md << "\nThe ranking of the " << aa_overall.size() << " arms under AutoAttack against PGD-20 (Spearman ρ): "
               << fixed(cw::fairness::spearman(aa_overall, pgd_overall), 2) << " by overall robust accuracy, "
               << fixed(cw::fairness::spearman(aa_worst, pgd_worst), 2) << " by the worst class's.\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cw;
    std::string results = "results/reproduction";
    std::vector<std::string> datasets = {"fashion-mnist", "gtsrb32"};
    cli::CommonFlags common;
    common.out = "docs/reproduction.md";
    cli::CommonSpec spec;
    spec.program = "reproduction_report";
    spec.epochs_help = "accepted for a uniform command line; ignored";
    spec.resume_help = "accepted for a uniform command line; ignored";
    cli::FlagSet app{"docs/reproduction.md from the committed results of scripts/reproduction.sh", "reproduction_report"};
    cli::add_common_flags(app, common, spec);
    app.option("--results", results, "the results tree").show_default();
    app.option("--datasets", datasets, "datasets, in page order").show_default();
    if (const int code = cli::parse(app, argc, argv, common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("reproduction_report", [&] {
        if (!fs::is_directory(results)) throw std::runtime_error("--results " + results + ": no such folder");
        std::ostringstream md;
        std::ifstream intro(fs::path(results) / "intro.md");
        if (intro) md << intro.rdbuf();
        md << "\n## Pilot: PGD-AT alone at the protocol's setting\n";
        for (const auto& d : datasets) pilot_section(md, fs::path(results), d);
        for (const auto& d : datasets) dataset_section(md, results, d);
        if (common.out == "-") std::cout << md.str();
        else util::write_file_atomic(common.out, md.str());
        return 0;
    });
}
