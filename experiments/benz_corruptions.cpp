// benz_corruptions — Benz et al., "Robustness may be at odds with fairness" (proposal), §3.4: do common corruptions
// treat the classes as unequally as an attack does, and as each other? A natural and an adversarially trained model
// (the same network, data and seed) are evaluated class by class on the clean test images, under the attack and
// under each common corruption (datasets/corruptions.h: CIFAR-10-C's 19, five severities; the official .npy files
// where present, else generated identically for both models). Then per model:
//   - per-class accuracy under each corruption (severities pooled) and averaged over the corruptions;
//   - Spearman's ρ between the per-class accuracies under each corruption (and the average) and under the attack —
//     is the class the attack breaks the class fog breaks? — with ρ against the clean ones for reference;
//   - accuracy per corruption family (noise, blur, weather, digital), natural against adversarial: Gilmer, Ford et
//     al. (the paper's [13]) found adversarial training helps on noise and hurts on fog and contrast.
// Written: corruption_ranking.md / .json / .html and figures/, linked from the study's summary.md.
//
//   ./experiments/benz_corruptions [--quick] [--arms natural,pgd_at] [--corruptions all|benchmark|names]
//                                  [--severities 1,2,3,4,5] [--dataset cifar10] [--resume]
// Setting (the proposal gives none beyond "ResNet18, CIFAR-10"): the shared recipe of docs/protocols/training.md §3 with the
// standard CIFAR ResNet-18, PGD-AT at 8/255 (10 steps of 2/255), the last checkpoint, PGD-20.
#include <filesystem>
#include <iostream>

#include "util/atomic_file.h"
#include "eval/corruption_set.h"
#include "protocols/benz_outputs.h"
#include "protocols/corruption_ranking.h"
#include "protocols/cpu_quick_recipe.h"
#include "report/figure_bars.h"
#include "report/figure_heatmap.h"
#include "report/html.h"
#include "report/run_data.h"
#include "study/run_sets.h"
#include "study/study.h"
#include "util/flags.h"
#include "util/split_list.h"

namespace fs = std::filesystem;
using namespace cw;

namespace {

// ρ(corruption, attack) per corruption and for the average, one bar per arm: where the bars are high the
// corruption ranks the classes as the attack does.
report::Figure rho_figure(const std::vector<protocols::ArmCorruptions>& arms,
                          const std::vector<protocols::CorruptionRanking>& ranks, const std::string& attack) {
    report::BarChart chart;
    chart.name = "corruption_spearman";
    chart.caption = "Spearman's rho between the per-class accuracies under each corruption and under " + attack +
                    " (missing bar: undefined, one side constant)";
    chart.ylabel = "rho vs " + attack;
    chart.centred = true;
    for (const auto& c : arms.front().corruptions) chart.classes.push_back(c.corruption);
    chart.classes.push_back("average");
    for (size_t i = 0; i < arms.size(); ++i) {
        report::Series s{arms[i].arm, ranks[i].rho_attack};
        s.values.push_back(ranks[i].average_rho_attack);
        chart.series.push_back(s);
    }
    return report::bar_figure(chart);
}

// Per-class accuracy (rows: classes; columns: clean, the attack, each corruption, the average) of one arm.
report::Figure class_heatmap(const std::vector<std::string>& classes, const protocols::ArmCorruptions& a,
                             const protocols::CorruptionRanking& r, const std::string& attack) {
    report::Heatmap h;
    h.name = "corruption_classes_" + a.arm;
    h.caption = a.arm + ": per-class accuracy (%) clean, under " + attack + ", under each corruption and averaged";
    h.xlabel = "evaluation";
    h.ylabel = "class";
    h.cblabel = "accuracy (%)";
    h.rows = classes;
    h.columns = {"clean", attack};
    for (const auto& c : a.corruptions) h.columns.push_back(c.corruption);
    h.columns.push_back("average");
    h.lo = 0;
    h.hi = 100;
    for (size_t k = 0; k < classes.size(); ++k) {
        std::vector<double> row{100 * a.clean[k], 100 * a.attacked[k]};
        for (const auto& c : a.corruptions) row.push_back(100 * c.per_class[k]);
        row.push_back(100 * r.average[k]);
        h.values.push_back(row);
    }
    return report::heatmap_figure(h);
}

// The ranking analysis of one set of runs (study/run_sets.h), from each arm's evaluations of the compared checkpoint
// (under attack and under the corruptions): corruption_ranking.md / .json / .html in the set's folder, with figures
// when gnuplot is there, linked from the study's summary.
void write_corruption_ranking(const study::Study& s, const std::string& severities, const study::RunSet& set) {
    const fs::path out(set.out);
    fs::create_directories(out);
    const std::string title = set.titled(s.title);
    const std::string& checkpoint = s.checkpoint;
    std::vector<protocols::ArmCorruptions> parts;
    std::vector<protocols::CorruptionRanking> ranks;
    std::vector<std::string> classes;
    std::string natural, adversarial;
    for (const study::Arm& a : s.arms) {
        const std::string attack_file = (fs::path(set.dir(a.name)) / ("eval_" + checkpoint) / "results.json").string();
        const std::string corr_file =
            (fs::path(set.dir(a.name)) / ("eval_" + checkpoint + "_corruptions") / "results.json").string();
        const nlohmann::json attack_results = report::load_results_json(attack_file);
        classes = attack_results.at("classes").get<std::vector<std::string>>();
        parts.push_back(protocols::read_arm_corruptions(a.name, attack_results, s.attack, attack_file,
                                                        report::load_results_json(corr_file), corr_file));
        ranks.push_back(protocols::rank_corruptions(parts.back()));
        if (a.job.method == "natural" && natural.empty()) natural = a.name;
        else if (a.job.method != "natural" && adversarial.empty()) adversarial = a.name;
    }
    const std::string md =
        "# " + title + "\n\nCheckpoint " + checkpoint + "; accuracies in %, each corruption's severities (" +
        severities + ") pooled; a corruption is scored by plain accuracy on the corrupted image, the attack by "
        "AutoAttack's rule. average = per class, the mean over the corruptions. ρ = Spearman's rank correlation "
        "of two per-class accuracy vectors (– where one side is constant, e.g. a natural model at 0% under "
        "attack for every class).\n\n" +
        protocols::corruption_ranking_markdown(classes, s.attack, parts, ranks, natural, adversarial);
    util::write_file_atomic((out / "corruption_ranking.md").string(), md);
    util::write_file_atomic((out / "corruption_ranking.json").string(),
                            protocols::corruption_ranking_json(classes, s.attack, parts, ranks).dump(2));
    std::string figures;
    if (report::gnuplot_available()) {
        const std::string dir = (out / "figures").string();
        figures += report::html_figure(report::render(rho_figure(parts, ranks, s.attack), dir), out.string());
        for (size_t i = 0; i < parts.size(); ++i)
            figures += report::html_figure(report::render(class_heatmap(classes, parts[i], ranks[i], s.attack), dir),
                                           out.string());
    }
    const std::string body = "<h1>" + report::html_escape(title) + "</h1>\n<p>The tables: <a "
                             "href=\"corruption_ranking.md\">corruption_ranking.md</a> (and .json); the arms side "
                             "by side: <a href=\"" + set.up + "compare.html\">compare.html</a>.</p>\n" + figures;
    util::write_file_atomic((out / "corruption_ranking.html").string(), report::html_page(title, body));
    protocols::append_to_summary(set.study_out, set.titled("Corruptions per class and their ranking against " + s.attack) +
                                                    ": [corruption_ranking.md](" + set.link + "corruption_ranking.md), "
                                                    "[corruption_ranking.html](" + set.link + "corruption_ranking.html) "
                                                    "(figures in " + set.link + "figures/).\n");
    std::cout << "\n" << md << "wrote " << (out / "corruption_ranking.md").string() << ", .json and .html\n";
}

}  // namespace

int main(int argc, char** argv) {
    // ---- the paper's setting (every value is a flag) ---------------------------------------------------------
    train::JobConfig base;
    base.experiment = "benz_corruptions";
    base.common.out = "runs/benz_corruptions";
    base.common.epochs = 200;                // docs/protocols/training.md §3 (Rice et al.'s recipe; the proposal gives none)
    base.data.dataset = "cifar10";
    base.arch = "resnet18";                  // "ResNet18" (the proposal), the standard CIFAR ResNet
    base.eps = "8/255";
    base.trainer.recipe.lr = 0.1;            // piecewise ÷10 at 50% and 75%, SGD 0.9, wd 5e-4, batch 128
    base.final_attacks = "pgd20";
    base.final_checkpoints = "last";         // the corruptions are evaluated on the model compared
    std::string arms = "natural,pgd_at";
    std::string corruptions = "all";         // CIFAR-10-C's 19
    std::string severities = "1,2,3,4,5";
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "benz_corruptions";
    spec.epochs_help = "training epochs of every arm";
    // Severity 3 only: the 19 corruptions are generated on the CPU for both models.
    spec.quick_preset = protocols::cpu_quick_recipe({{"--train-n", "5000"}, {"--epochs", "5"}, {"--eval-n", "500"},
                                                     {"--epoch-eval-n", "200"}, {"--severities", "3"},
                                                     {"--out", "runs/benz_corruptions_quick"}});
    spec.quick_what = "natural and PGD-AT LeNet-5 on 5,000 real CIFAR-10 images, 5 epochs; 500 test images under the "
                      "19 corruptions at severity 3";
    cli::FlagSet app{"classwise benz_corruptions: common corruptions per class, natural vs adversarial training, ranking "
                     "under corruptions vs under attack (Benz et al. 3.4)", "benz_corruptions"};
    study::StudyFlags study_flags;
    // The paper's settings for these flags, shown by --help and --print-config.
    study::add_experiment_flags(app, base, spec, study_flags, {"--arch", "--eps"});
    // The arms pick the methods; the corruption evaluation is this experiment's, under its own two flags.
    app.remove("--method");
    app.remove("--final-corruptions");
    app.remove("--corruption-severities");
    app.option("--arms", arms, "the methods trained and compared, comma-separated (each in <out>/<method>; the "
                                   "natural-vs-adversarial table needs natural and one other)")
        .show_default();
    app.option("--corruptions", corruptions, "all (CIFAR-10-C's 19), benchmark (its 15), fair-tat (18) or names, "
                                                 "comma-separated")
        .show_default();
    app.option("--severities", severities, "corruption severities, e.g. 1,2,3,4,5, 3 or 1-5").show_default();
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("benz_corruptions", [&] {
        // Checked before any training: a typo must not wait for the end of it.
        if (eval::parse_corruption_list("--corruptions", corruptions).empty())
            throw std::invalid_argument("--corruptions: name at least one corruption (or all, benchmark, fair-tat)");
        eval::parse_severities("--severities", severities);
        base.final_corruptions = corruptions;
        base.corruption_severities = severities;
        const std::vector<std::string> attacks = util::split_list(base.final_attacks);
        if (attacks.empty()) throw std::invalid_argument("--final-attacks: the ranking under attack needs an attack");
        const std::string checkpoint = util::split_list(base.final_checkpoints).at(0);
        study::Study s;
        s.title = study::data_and_model(base) +
                  ": common corruptions per class, natural vs adversarial training (Benz et al. 3.4)";
        s.arms = study::arms_for_methods("--arms", arms, base);
        s.attack = attacks.front();
        s.checkpoint = checkpoint;
        if (const int code = study::run_study(s, base.common, std::cout, study_flags); code != 0) return code;

        for (const study::RunSet& set : study::run_sets(s, base.common, study_flags))
            write_corruption_ranking(s, severities, set);
        return 0;
    });
}
