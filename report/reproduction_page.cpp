// See reproduction_page.h.
#include "report/reproduction_page.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "util/format.h"
#include "eval/agreement.h"
#include "report/claims.h"
#include "report/cifar10_pilot.h"
#include "report/named_worst.h"
#include "report/published_ranking.h"
#include "report/reproduction_claims.h"
#include "report/reproduction_pilot.h"
#include "report/reproduction_runs.h"

namespace cw::report::reproduction {

namespace {

namespace fs = std::filesystem;
using util::fixed;

std::string mean_sd(const std::vector<double>& v) {
    if (v.empty()) return "—";
    const auto e = paired_effect(v);
    return v.size() < 2 ? fixed(e.mean) : fixed(e.mean) + " ± " + fixed(e.sd);  // one seed has no spread to show
}

// The retrained hot starts (scripts/reproduction.sh) by arm and seed, each the model its seed's fine-tunes started
// from.
std::map<std::string, Arm> retrained_hot_starts(const std::map<std::string, Arm>& arms) {
    std::map<std::string, Arm> retrained;
    for (const auto& [name, arm] : arms)
        for (const auto& [seed, run] : arm)
            if (run.hot_start) retrained[name][seed] = *run.hot_start;
    return retrained;
}

// One row per checkpoint the arm's runs were evaluated at (last; ema_last for the weight-averaging arms).
void arm_rows(std::ostream& md, const std::string& label, const Arm& arm) {
    for (const std::string ckpt : {"last", "ema_last"}) {
        std::map<std::string, std::vector<double>> cols;
        for (const auto& [seed, run] : arm)
            for (const char* m : {"clean", "clean worst", "PGD-20", "PGD-20 worst", "PGD-20 spread", "boundary worst"}) {
                const double v = metric(run, ckpt, m);
                if (!std::isnan(v)) cols[m].push_back(v);
            }
        if (cols.empty()) continue;
        md << "| " << label << " | " << seeds_of(arm) << " | " << ckpt << " | " << mean_sd(cols["clean"]) << " | "
           << mean_sd(cols["clean worst"]) << " | " << mean_sd(cols["PGD-20"]) << " | " << mean_sd(cols["PGD-20 worst"])
           << " | " << mean_sd(cols["PGD-20 spread"]) << " | " << mean_sd(cols["boundary worst"]) << " |\n";
    }
}

void arms_table(std::ostream& md, const std::map<std::string, Arm>& arms) {
    md << "### Every arm (mean ± sample sd over seeds, %; the last checkpoint, and for the weight-averaging arms their "
          "averaged model, ema_last)\n\n"
          "| arm | seeds | checkpoint | clean | clean worst | PGD-20 | PGD-20 worst | PGD-20 spread | boundary error worst |\n"
          "|---|---|---|---|---|---|---|---|---|\n";
    const auto retrained = retrained_hot_starts(arms);
    for (const auto& [name, arm] : arms) {
        arm_rows(md, name, arm);
        if (auto r = retrained.find(name); r != retrained.end()) arm_rows(md, name + " (retrained hot start)", r->second);
    }
    for (const auto& [name, arm] : arms)
        if (const std::string seeds = seeds_without_average(arm); !seeds.empty())
            md << "\n" << name << ": FAWA accepted no epoch in " << seeds_text(seeds)
               << " (the worst validation class never reached its threshold): no averaged model (ema_last), only the "
                  "last one.\n";
}

// A claim judged on the committed runs: its paired effect and verdict, or why there is none.
struct ClaimOutcome {
    bool run = false;        // both arms have runs
    PairedEffect e;          // over the seeds both arms have (e.n == 0: none pairs)
    std::string no_average;  // seeds FAWA left without an averaged model, on either side
    Verdict v = Verdict::undecided;
    bool at_zero = false;    // the worst class at 0% in every run of both arms
};

ClaimOutcome claim_outcome(const ClaimSpec& c, const std::map<std::string, Arm>& arms) {
    ClaimOutcome o;
    auto a = arms.find(c.arm), b = arms.find(c.base);
    if (a == arms.end() || b == arms.end()) return o;
    o.run = true;
    o.e = paired_effect(differences(c, a->second, b->second));
    // Seeds left without an averaged model by FAWA, on either side: they cannot enter the comparison.
    for (const auto& [arm, ckpt] : {std::pair{&a->second, &c.arm_checkpoint}, {&b->second, &c.base_checkpoint}})
        if (*ckpt == "ema_last" && o.no_average.empty()) o.no_average = seeds_without_average(*arm);
    if (o.e.n == 0) return o;
    o.v = c.floor ? judge_at_least(o.e, *c.floor) : judge(o.e, {c.direction, c.paper_size});
    o.at_zero = both_at_zero(c, a->second, b->second);
    return o;
}

std::string effect_text(const PairedEffect& e) {
    return fixed(e.mean, 1, true) + " [" + fixed(e.lo, 1, true) + ", " + fixed(e.hi, 1, true) + "]";
}

// A claim's effect and verdict cells: "not run yet" until both arms have runs.
std::pair<std::string, std::string> claim_cells(const ClaimSpec& c, const std::map<std::string, Arm>& arms) {
    const ClaimOutcome o = claim_outcome(c, arms);
    if (!o.run) return {"not run yet", "—"};
    const auto& e = o.e;
    const std::string fawa_note = "FAWA accepted no epoch in " + seeds_text(o.no_average) +
                                  " (its worst validation class stayed under FAWA's threshold), so there is no averaged model";
    if (e.n == 0)
        return o.no_average.empty()
                   ? std::pair<std::string, std::string>{"not run yet", "—"}
                   : std::pair<std::string, std::string>{fawa_note, "**undecided** (untestable at this scale while FAWA "
                                                                    "accepts no epoch; the CCM rows judge the same "
                                                                    "training on its last model)"};
    const std::string effect = effect_text(e) + " (" + std::to_string(e.n) + ")" +
                               (o.no_average.empty() ? "" : "; left out: " + fawa_note);
    const Verdict v = o.v;
    std::string verdict = "**" + verdict_name(v) + "**";
    if (o.at_zero) {
        verdict += " (the worst class is at 0% in every run of both arms: the floor this scale leaves, no room to show "
                   "a lift)";
    } else if (v == Verdict::undecided && e.n < 2) {
        verdict += " (one seed: no spread to judge it by yet)";
    } else if (v == Verdict::undecided && !c.floor) {
        const auto n = seeds_to_decide(e.mean, e.sd);
        verdict += n ? " (about " + std::to_string(*n) + " seeds would decide it at this mean and sd)"
                     : " (no seed count would: the effect is within its noise)";
    }
    return {effect, verdict};
}

// The same claim as one short cell of the verdict table.
std::string claim_summary_cell(const ClaimSpec& c, const std::map<std::string, Arm>& arms) {
    const ClaimOutcome o = claim_outcome(c, arms);
    if (!o.run || (o.e.n == 0 && o.no_average.empty())) return "not run yet";
    if (o.e.n == 0) return "**undecided**: FAWA accepted no epoch, no averaged model";
    return "**" + verdict_name(o.v) + "**: " + effect_text(o.e) + ", " + std::to_string(o.e.n) +
           (o.e.n == 1 ? " seed" : " seeds") + (o.at_zero ? " (worst class at 0% in both arms)" : "");
}

void claims_table(std::ostream& md, const std::map<std::string, Arm>& arms) {
    md << "\n### The claims\n\nEffect = arm − base per seed (points), mean and 95% t interval over the seeds both arms "
          "have.\n\n| claim | source | arm vs base | metric | effect [95% CI] (n) | paper | verdict |\n"
          "|---|---|---|---|---|---|---|\n";
    for (const auto& c : claims()) {
        const auto [effect, verdict] = claim_cells(c, arms);
        md << "| " << c.text << " | " << c.source << " | " << c.arm << " (" << c.arm_checkpoint << ") vs " << c.base
           << " (" << c.base_checkpoint << ") | " << c.metric << (c.floor ? " ≥ " + fixed(*c.floor, 0) : "") << " | "
           << effect << " | " << c.paper_value << " | " << verdict << " |\n";
    }
}

// A paragraph per retrained hot start: which CPU retrained it and which fine-tunes are compared with it.
void retrained_notes(std::ostream& md, const std::map<std::string, Arm>& arms) {
    for (const auto& [name, arm] : retrained_hot_starts(arms))
        for (const auto& [seed, run] : arm) {
            std::string tunes;
            for (const auto& [tune, tune_arm] : arms)
                if (hot_start_arm_of(tune) == name && tune_arm.count(seed) && tune_arm.at(seed).from_retrained_hot_start)
                    tunes += (tunes.empty() ? "" : ", ") + tune;
            const std::string compared =
                tunes.empty() ? "no fine-tune started from it yet"
                              : tunes + " seed " + std::to_string(seed) + " started from it and " +
                                    (tunes.find(',') == std::string::npos ? "is" : "are") +
                                    " compared with it, not with the committed run";
            md << "\n" << name << " seed " << seed << " was retrained" << (run.cpu.empty() ? "" : " on " + run.cpu)
               << " for its fine-tunes (checkpoints are not committed), and evaluates differently from its committed record "
                  "(another CPU's float rounding): "
               << compared << "; every other claim uses the committed run.\n";
        }
}

// Benz et al.: the weakest classes are the same across seeds and methods. Every adversarially trained run's
// per-class PGD-20 accuracy (last checkpoint) against the mean ranking of the PGD-AT seeds.
struct Weakest {
    PairedEffect rho;  // over the adversarially trained runs
    std::string modal;  // the class most often the worst
    int modal_n = 0, total = 0;
    Verdict v = Verdict::undecided;
};

std::optional<Weakest> weakest_outcome(const std::map<std::string, Arm>& arms, const std::vector<std::string>& classes) {
    auto base = arms.find("pgd_at");
    if (base == arms.end()) return std::nullopt;
    // The reference ranking: the mean per-class PGD-20 accuracy of the PGD-AT seeds, leaving out the run compared
    // (a PGD-AT seed is never compared with itself).
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
                if (!ref.empty()) rho.push_back(fairness::spearman(pc, ref));
                if (worst_class(pc) < classes.size()) ++worst_count[classes[worst_class(pc)]];
            }
    }
    if (rho.empty()) return std::nullopt;
    Weakest w;
    w.rho = paired_effect(rho);
    for (const auto& [cls, n] : worst_count) {
        w.total += n;
        if (n > w.modal_n) w.modal = cls, w.modal_n = n;
    }
    w.v = judge_at_least(w.rho, 0.5);
    return w;
}

std::string rho_interval(const PairedEffect& e) {
    return fixed(e.mean, 2) + " [" + fixed(std::max(e.lo, -1.0), 2) + ", " + fixed(std::min(e.hi, 1.0), 2) + "]";
}

void weakest_classes(std::ostream& md, const std::map<std::string, Arm>& arms, const std::vector<std::string>& classes) {
    const auto w = weakest_outcome(arms, classes);
    if (!w) return;
    const auto& e = w->rho;
    md << "\n**The same classes are the weakest across seeds and methods** (Benz et al.): Spearman ρ of each "
          "adversarially trained run's per-class PGD-20 accuracy against the PGD-AT seeds' mean, over "
       << e.n << (e.n == 1 ? " run: " : " runs: ") << rho_interval(e)
       << (e.lo < -1 || e.hi > 1 ? " (the t interval, cut at ±1)" : "") << "; the worst class is " << w->modal << " in "
       << w->modal_n << " of " << w->total << " runs. Verdict: **" << verdict_name(w->v)
       << "** (reproduced when the interval lies above ρ = 0.5; undecided with fewer than two runs).\n";
}

// AutoAttack on one seed per arm (seed 0, or the lowest seed attacked where seed 0's checkpoint was not at hand):
// does the PGD-20 ranking of the classes hold under the stronger attack, and that of the methods (by overall and by
// worst-class robust accuracy)? Each model is compared with its own PGD-20 evaluation: a model retrained for the attack
// (its run's checkpoint not at hand) with that model's, never with the committed run's.
void autoattack_table(std::ostream& md, const std::map<std::string, Arm>& arms, const std::vector<std::string>& classes) {
    std::ostringstream rows;
    bool attacked_elsewhere = false, attacked_retrained = false;
    std::vector<double> aa_overall, pgd_overall, aa_worst, pgd_worst;
    for (const auto& [name, arm] : arms) {
        // The run whose evaluations describe the attacked model: the run itself, or the model retrained for it.
        const auto model_of = [](const Run& run) -> const Run& { return run.autoattack_model ? *run.autoattack_model : run; };
        auto attacked = std::find_if(arm.begin(), arm.end(), [&](const auto& seed_run) {
            const auto& evals = seed_run.second.evals;
            const auto& model = model_of(seed_run.second).evals;
            return evals.count("autoattack") && evals.at("autoattack").count("autoattack") && model.count("last") &&
                   model.at("last").count("pgd20");
        });
        if (attacked == arm.end()) continue;
        const Eval& aa = attacked->second.evals.at("autoattack").at("autoattack");
        const Eval& pgd = model_of(attacked->second).evals.at("last").at("pgd20");
        const std::string& device = attacked->second.autoattack_device;
        const bool elsewhere = !device.empty() && device != "cpu";
        const bool retrained = attacked->second.autoattack_model != nullptr;
        attacked_elsewhere |= elsewhere;
        attacked_retrained |= retrained;
        rows << "| " << name << " | " << attacked->first << (elsewhere ? " (" + device + ")" : "")
             << (retrained ? " (retrained)" : "") << " | "
             << fixed(100 * aa.overall) << " | "
             << fixed(100 * min_of(aa.per_class)) << " ("
             << class_name(classes, worst_class(aa.per_class)) << ") | "
             << fixed(fairness::spearman(aa.per_class, pgd.per_class), 2) << " |\n";
        aa_overall.push_back(aa.overall), pgd_overall.push_back(pgd.overall);
        aa_worst.push_back(min_of(aa.per_class)), pgd_worst.push_back(min_of(pgd.per_class));
    }
    if (rows.str().empty()) return;
    md << "\n### AutoAttack (standard cascade, first 1,000 test images, one seed per arm, last checkpoint)\n\n"
          "| arm | seed | AA | AA worst class | Spearman ρ with PGD-20 per class (whole test set) |\n"
          "|---|---|---|---|---|\n"
       << rows.str();
    if (attacked_elsewhere)
        md << "\nA seed marked with a device was attacked there, the checkpoint trained on this page's CPU: the model "
              "is the same, only the attack's floating-point rounding differs.\n";
    if (attacked_retrained)
        md << "\nA seed marked retrained was trained again with its own command on another CPU for the attack "
              "(checkpoints are not committed; its record: autoattack/model/ beside the seed's results). That model has "
              "the seed's initialisation and data order but another CPU's rounding, so its ρ compares the attack with "
              "its own PGD-20 evaluation on the whole test set, not with the committed run's.\n";
    if (aa_overall.size() >= 3)
        md << "\nThe ranking of the " << aa_overall.size() << " arms under AutoAttack against PGD-20 (Spearman ρ): "
           << fixed(fairness::spearman(aa_overall, pgd_overall), 2) << " by overall robust accuracy, "
           << fixed(fairness::spearman(aa_worst, pgd_worst), 2) << " by the worst class's.\n";
}

std::string share_text(const NamedWorst& w) {
    return std::to_string(w.named) + " of " + std::to_string(w.runs) + " runs [" + fixed(100 * w.lo, 0) + "%, " +
           fixed(100 * w.hi, 0) + "%]";
}

void cat_worst(std::ostream& md, const std::map<std::string, Arm>& arms, const std::vector<std::string>& classes) {
    const auto w = named_worst_outcome(arms, classes, "cat");
    if (!w) return;
    md << "\n**Cat is the worst class** (Benz et al.; Xu et al.): the worst class under PGD-20 is cat in "
       << share_text(*w) << " of PGD-AT and TRADES (the last checkpoint; 95% Wilson interval of the share). Verdict: **"
       << verdict_name(w->v) << "** (reproduced when the interval lies above one half).\n";
}

void dataset_section(std::ostream& md, const fs::path& results, const std::string& dataset) {
    std::vector<std::string> classes;
    const auto arms = load_arms(results / dataset, classes);
    md << "\n## " << dataset_title(dataset) << "\n\n";
    if (arms.empty()) {
        md << "No finished runs committed yet.\n";
        return;
    }
    arms_table(md, arms);
    claims_table(md, arms);
    retrained_notes(md, arms);
    weakest_classes(md, arms, classes);
    cat_worst(md, arms, classes);
    ranking_section(md, results / "published" / (dataset + ".csv"), arms);
    autoattack_table(md, arms, classes);
}

}  // namespace

std::string dataset_title(const std::string& dataset) {
    static const std::map<std::string, std::string> titles = {
        {"cifar10", "CIFAR-10"}, {"fashion-mnist", "Fashion-MNIST"}, {"gtsrb32", "GTSRB-17"}};
    auto t = titles.find(dataset);
    return t == titles.end() ? dataset : t->second;
}

std::vector<std::string> datasets_present(const fs::path& results, const std::vector<std::string>& datasets) {
    std::vector<std::string> present;
    for (const auto& d : datasets)
        if (fs::is_directory(results / d) || fs::is_directory(results / "pilot" / d)) present.push_back(d);
    return present;
}

std::string verdict_table(const fs::path& results, const std::vector<std::string>& datasets) {
    struct Column {
        std::string title;
        std::map<std::string, Arm> arms;
        std::vector<std::string> classes;
    };
    std::vector<Column> columns;
    for (const auto& d : datasets) {
        Column c{dataset_title(d), {}, {}};
        c.arms = load_arms(results / d, c.classes);
        if (!c.arms.empty()) columns.push_back(std::move(c));
    }
    std::ostringstream md;
    if (columns.empty()) {
        md << "No finished runs committed yet.\n";
        return md.str();
    }
    md << "| claim (paper) |";
    for (const auto& c : columns) md << " " << c.title << " |";
    md << "\n|---|";
    for (size_t k = 0; k < columns.size(); ++k) md << "---|";
    md << "\n";
    bool first = true;
    for (const auto& claim : claims()) {
        if (claim.headline.empty()) continue;
        // A claim no dataset has runs for yet stays on the page's own table, not in the headline.
        std::vector<std::string> cells;
        for (const auto& c : columns) cells.push_back(claim_summary_cell(claim, c.arms));
        if (std::all_of(cells.begin(), cells.end(), [](const std::string& s) { return s == "not run yet"; }) && !first)
            continue;
        md << "| " << claim.headline << " |";
        for (const auto& cell : cells) md << " " << cell << " |";
        md << "\n";
        if (first) {  // Benz et al.'s second finding beside their first
            md << "| The same classes are the weakest across seeds and methods (Benz et al.) |";
            for (const auto& c : columns) {
                const auto w = weakest_outcome(c.arms, c.classes);
                md << " "
                   << (w ? "**" + verdict_name(w->v) + "**: ρ " + rho_interval(w->rho) + ", " + std::to_string(w->rho.n) +
                               " runs"
                         : std::string("not run yet"))
                   << " |";
            }
            md << "\n";
            // Their CIFAR-10 finding, on the datasets that have a cat class.
            bool any_cat = false;
            std::ostringstream row;
            row << "| Cat is the worst class under adversarial training (Benz et al.; Xu et al.) |";
            for (const auto& c : columns) {
                const auto w = named_worst_outcome(c.arms, c.classes, "cat");
                any_cat |= w.has_value();
                row << " " << (w ? "**" + verdict_name(w->v) + "**: " + share_text(*w) : std::string("—")) << " |";
            }
            if (any_cat) md << row.str() << "\n";
            first = false;
        }
    }
    md << "\nEach cell: the verdict, then the effect arm − base in points, its mean over the seeds both arms have "
          "and its 95% t interval. For the weakest classes: Spearman's ρ of each adversarially trained run's "
          "per-class PGD-20 accuracy with PGD-AT's, over the runs (reproduced when the interval lies above 0.5). "
          "The rules, every arm and every claim: docs/reproduction.md.\n";
    return md.str();
}

const char* const readme_begin =
    "<!-- verdict table: written by build/tools/reproduction_report --readme README.md; edit the results, not this -->";
const char* const readme_end = "<!-- end of verdict table -->";

std::string replace_marked_block(const std::string& text, const std::string& block) {
    const auto b = text.find(readme_begin);
    const auto e = text.find(readme_end);
    if (b == std::string::npos || e == std::string::npos || e < b)
        throw std::runtime_error(std::string("no verdict table markers (") + readme_begin + " ... " + readme_end + ")");
    const auto start = b + std::string(readme_begin).size();
    return text.substr(0, start) + "\n" + block + text.substr(e);
}

std::string reproduction_page(const fs::path& results, const std::vector<std::string>& datasets) {
    std::ostringstream md;
    std::ifstream intro(results / "intro.md");
    if (intro) md << intro.rdbuf();
    const auto present = datasets_present(results, datasets);
    md << "\n## The verdicts\n\n" << verdict_table(results, present);
    md << "\n## Pilot: PGD-AT alone at the protocol's setting\n";
    cifar10_pilot_section(md, results);
    for (const auto& d : present) pilot_section(md, results, d);
    for (const auto& d : present) dataset_section(md, results, d);
    return md.str();
}

}  // namespace cw::report::reproduction
