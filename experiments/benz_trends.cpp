// benz_trends — Benz et al., "Robustness May Be at Odds with Fairness" (proposal), Figures 1-2 and §3.1's "whether
// the vulnerable class changes during the training": CIFAR-10 ResNet-18 trained naturally and with PGD-AT, every
// epoch evaluated class by class, then per arm:
//   1. the per-epoch evaluation on the test subset, clean and PGD (history.csv; the run reports draw the per-class
//      curves);
//   2. from history.csv: the worst class of every epoch (clean and robust), how often and when it changes, the
//      epoch from which it stays the same, the Spearman ρ of the per-class ranking between consecutive epochs and
//      against the last one, the spread per epoch (protocols/class_trends.h) → trends.md, trends.json, a worst-class
//      timeline per arm in figures/;
//   3. Figures 1-2: each arm's per-class bars of the last checkpoint, raw and minus the class mean (natural = Fig. 1,
//      PGD-AT = Fig. 2; the run report draws them), linked from summary.md with the rest.
//
//   ./experiments/benz_trends [--quick] [--dataset cifar10] [--arch resnet18] [--methods natural,pgd_at] [--resume]
// The paper names ResNet-18 and CIFAR-10 only; the recipe is the shared one (docs/protocols/training.md §3: SGD 0.9, wd 5e-4,
// lr 0.1 ÷10 at 50% and 75%, batch 128, 200 epochs, crop+flip), ε = 8/255, PGD-10 for training and the per-epoch
// evaluation, PGD-20 at the end. Every flag of `train` applies to every arm; --methods replaces --method.
#include <filesystem>
#include <iostream>

#include "util/atomic_file.h"
#include "protocols/benz_outputs.h"
#include "protocols/class_trends.h"
#include "protocols/cpu_quick_recipe.h"
#include "report/run_data.h"
#include "study/run_sets.h"
#include "study/study.h"
#include "util/flags.h"
#include "util/split_list.h"

namespace fs = std::filesystem;

namespace {

using namespace cw;

// The trends of one set of runs (study/run_sets.h), from each arm's history.csv: trends.md / .json and the worst-class
// timelines in the set's folder, linked from the study's summary with the arms' own figures.
void write_trends(const study::Study& s, const study::RunSet& set) {
    const std::string& out = set.out;
    fs::create_directories(out);
    const std::string title = set.titled(s.title);
    std::string md = "# Per-class trends during training (Benz et al. §3.1)\n\n" + title +
                     ".\n\nFrom each arm's history.csv (the per-epoch evaluation on the test subset). Worst class: "
                     "the lowest per-class accuracy (lowest index on ties); stable from: the first epoch of the "
                     "final unbroken run of the last worst class; ρ: Spearman's rank correlation of the per-class "
                     "accuracies; spread: best − worst class.\n\n";
    nlohmann::json json = {{"title", title}, {"arms", nlohmann::json::object()}};
    std::vector<report::Figure> figs;
    std::vector<std::string> fig_arms;
    std::string links;
    for (const study::Arm& a : s.arms) {
        const fs::path dir = set.dir(a.name);
        const report::RunData run = report::load_run(dir.string());
        if (!run.history) throw std::runtime_error((dir / "history.csv").string() + " not found");
        std::vector<protocols::TrendAnalysis> trends;
        for (const auto& series : protocols::history_series(*run.history, run.classes.size(), (dir / "history.csv").string()))
            trends.push_back(protocols::analyse_trend(series));
        md += protocols::trends_markdown(a.name, trends, run.classes);
        nlohmann::json arm = nlohmann::json::array();
        for (const auto& t : trends) arm.push_back(protocols::trend_json(t, run.classes));
        json["arms"][a.name] = arm;
        if (!trends.empty()) {
            figs.push_back(protocols::worst_class_timeline("benz_worst_class_" + a.name, a.name, trends, run.classes));
            fig_arms.push_back(a.name);
        }
        const std::string label = a.job.method == "natural" ? "Fig. 1, " + a.name
                                  : a.job.method == "pgd_at" ? "Fig. 2, " + a.name : a.name;
        links += protocols::arm_figure_links(set.study_out, fs::relative(dir, set.study_out).string(), set.titled(label));
    }
    util::write_file_atomic((fs::path(out) / "trends.md").string(), md);
    util::write_file_atomic((fs::path(out) / "trends.json").string(), json.dump(2) + "\n");
    const std::vector<std::string> drawn = protocols::render_figures(figs, out);
    for (size_t i = 0; i < drawn.size(); ++i)
        links += "- " + set.titled(fig_arms[i]) + ": [worst class per epoch](" + set.link + drawn[i] + ")\n";
    protocols::append_to_summary(set.study_out, "## " + set.titled("Benz et al. §3.1: trends and Figures 1-2") +
                                                    "\n\n- [trends.md](" + set.link + "trends.md), [trends.json](" +
                                                    set.link + "trends.json)\n" + links);
    std::cout << "\n" << md << "wrote " << (fs::path(out) / "trends.md").string() << ", trends.json, and the links "
              << "in summary.md\n";
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cw;
    // ---- the paper's setting (every value is a flag) ---------------------------------------------------------
    train::JobConfig base;
    base.experiment = "benz_trends";
    base.common.out = "runs/benz_trends";
    base.common.epochs = 200;
    base.data.dataset = "cifar10";
    base.arch = "resnet18";                 // "ResNet18 [17]": He et al.'s, not the pre-activation variant
    base.trainer.eval_every = 1;            // the trends need every epoch
    base.final_attacks = "pgd20";
    base.final_checkpoints = "last";        // Figures 1-2 show the trained model
    std::string methods = "natural,pgd_at";
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "benz_trends";
    spec.epochs_help = "training epochs of every model (each one evaluated per class)";
    // ResNet-18 trains at ~10 images/s under PGD-10 on two cores: the quick run is the CPU recipe's LeNet-5, with
    // enough epochs to see a trend.
    spec.quick_preset = protocols::cpu_quick_recipe({{"--train-n", "5000"}, {"--epochs", "10"}, {"--eval-steps", "5"},
                                                     {"--eval-n", "1000"}, {"--epoch-eval-n", "1000"},
                                                     {"--out", "runs/benz_trends_quick"}});
    spec.quick_what = "LeNet-5 on 5,000 real training images, 10 epochs each evaluated on 1,000 test images, 5-step attacks";
    cli::FlagSet app{"classwise benz_trends: per-class accuracy over training and Figures 1-2, natural vs PGD-AT "
                     "(Benz et al. §3.1)", "benz_trends"};
    study::StudyFlags study_flags;
    // The paper's settings for these flags, shown by --help and --print-config.
    study::add_experiment_flags(app, base, spec, study_flags, {"--arch"});
    study::add_methods_flag(app, methods);
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("benz_trends", [&] {
        const std::vector<std::string> attacks = util::split_list(base.final_attacks);
        if (attacks.empty()) throw std::invalid_argument("--final-attacks: Figures 1-2 need an attack (e.g. pgd20)");
        study::Study s;
        s.title = study::data_and_model(base) +
                  ": per-class accuracy over training, natural vs adversarial training (Benz et al. §3.1, Figs. 1-2)";
        s.arms = study::arms_for_methods("--methods", methods, base);
        s.attack = attacks.front();
        if (const int code = study::run_study(s, base.common, std::cout, study_flags); code != 0) return code;

        for (const study::RunSet& set : study::run_sets(s, base.common, study_flags)) write_trends(s, set);
        return 0;
    });
}
