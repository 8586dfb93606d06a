// benz_similarity — Benz et al., "Robustness May Be at Odds with Fairness" (proposal) §3.2: are the vulnerable
// classes those the model sees as close to other classes? CIFAR-100 ResNet-18 trained naturally and with PGD-AT,
// each last model evaluated class by class (clean and PGD-20, with the classes' mean logit vectors), then per arm
// (protocols/class_similarity.h):
//   1. the confusion structure: the share of errors that stay inside the true class's superclass against the share
//      expected by chance, the most-confused pairs and whether their confusion runs both ways;
//   2. the cross-class cosine similarity of the mean logit vectors, clean and under attack (the run reports draw
//      the matrices): the most similar pairs, within- against across-superclass;
//   3. a class's similarity to the others (mean_other, max_other) against its clean and robust error: Spearman and
//      Pearson over the classes, and a scatter figure per arm;
//   → similarity.md, similarity.json, figures/, linked from summary.md.
//
//   ./experiments/benz_similarity [--quick] [--dataset cifar100|cifar10|fashion-mnist|...] [--resume]
// The similarity part works on any dataset; the superclass part needs superclasses (CIFAR-100). The recipe is the
// shared one (docs/protocols/training.md §3); ε = the dataset's default (8/255 on CIFAR). Every flag of `train` applies to every arm.
#include <filesystem>
#include <iostream>

#include "util/atomic_file.h"
#include "protocols/benz_outputs.h"
#include "protocols/class_similarity.h"
#include "protocols/cpu_quick_recipe.h"
#include "report/run_data.h"
#include "study/run_sets.h"
#include "study/study.h"
#include "util/flags.h"
#include "util/split_list.h"

namespace fs = std::filesystem;

namespace {

using namespace cw;

// The similarity analysis of one set of runs (study/run_sets.h), from each arm's last evaluation: similarity.md /
// .json and the scatter figures in the set's folder, linked from the study's summary.
void write_similarity(const study::Study& s, const study::RunSet& set, const std::string& dataset) {
    const std::string& out = set.out;
    fs::create_directories(out);
    const std::string title = set.titled(s.title);
    std::string md = "# Confusion structure and cross-class similarity (Benz et al. §3.2)\n\n" + title +
                     ".\n\nLast checkpoint, clean and " + s.attack + ". Cross-class similarity: the cosine of the "
                     "classes' mean logit vectors; mean_other / max_other: a class's mean / largest similarity to "
                     "the other classes. Errors: 1 − per-class accuracy. Chance share: the share of errors inside the "
                     "true superclass if each class's errors fell evenly on the other classes.\n\n";
    nlohmann::json json = {{"title", title}, {"attack", s.attack}, {"arms", nlohmann::json::object()}};
    std::vector<report::Figure> figs;
    std::string links;
    bool superclasses = false;
    for (const study::Arm& a : s.arms) {
        const std::string file = (fs::path(set.dir(a.name)) / "eval_last" / "results.json").string();
        const protocols::SimilarityAnalysis an =
            protocols::analyse_similarity(report::load_results_json(file), s.attack, file);
        superclasses |= an.clean.superclass.has_value();
        md += protocols::similarity_markdown(a.name, an);
        json["arms"][a.name] = protocols::similarity_json(an);
        figs.push_back(protocols::similarity_scatter("benz_similarity_vs_error_" + a.name, a.name, an));
        links += "- " + set.titled(a.name) + ": [its run report](" + fs::relative(set.dir(a.name), set.study_out).string() +
                 "/report.html) (confusion and cosine-similarity heatmaps" +
                 (an.clean.superclass ? ", superclass confusion" : "") + ")\n";
    }
    if (!superclasses) md += "No superclasses in " + dataset + ": the superclass part needs CIFAR-100.\n";
    util::write_file_atomic((fs::path(out) / "similarity.md").string(), md);
    util::write_file_atomic((fs::path(out) / "similarity.json").string(), json.dump(2) + "\n");
    const std::vector<std::string> drawn = protocols::render_figures(figs, out);
    for (size_t i = 0; i < drawn.size(); ++i)
        links += "- " + set.titled(s.arms[i].name) + ": [similarity against error, per class](" + set.link + drawn[i] + ")\n";
    protocols::append_to_summary(set.study_out, "## " + set.titled("Benz et al. §3.2: confusion structure and "
                                                                   "cross-class similarity") +
                                                    "\n\n- [similarity.md](" + set.link + "similarity.md), [similarity.json](" +
                                                    set.link + "similarity.json)\n" + links);
    std::cout << "\n" << md << "wrote " << (fs::path(out) / "similarity.md").string()
              << ", similarity.json, and the links in summary.md\n";
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cw;
    // ---- the paper's setting (every value is a flag) ---------------------------------------------------------
    train::JobConfig base;
    base.experiment = "benz_similarity";
    base.common.out = "runs/benz_similarity";
    base.common.epochs = 200;
    base.data.dataset = "cifar100";         // "CIFAR100, which has super-classes"
    base.arch = "resnet18";
    base.final_attacks = "pgd20";
    base.final_checkpoints = "last";
    std::string methods = "natural,pgd_at";
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "benz_similarity";
    spec.epochs_help = "training epochs of every model";
    spec.quick_preset = protocols::cpu_quick_recipe({{"--train-n", "5000"}, {"--epochs", "5"}, {"--eval-steps", "5"},
                                                     {"--eval-n", "1000"}, {"--epoch-eval-n", "300"},
                                                     {"--out", "runs/benz_similarity_quick"}});
    spec.quick_what = "LeNet-5 on 5,000 real training images, 5 epochs, 5-step attacks, 1,000 test images";
    cli::FlagSet app{"classwise benz_similarity: confusion structure, cross-class similarity and vulnerability, natural "
                     "vs PGD-AT (Benz et al. §3.2)", "benz_similarity"};
    study::StudyFlags study_flags;
    // The paper's settings for these flags, shown by --help and --print-config.
    study::add_experiment_flags(app, base, spec, study_flags, {"--arch"});
    study::add_methods_flag(app, methods);
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("benz_similarity", [&] {
        const std::vector<std::string> attacks = util::split_list(base.final_attacks);
        if (attacks.empty()) throw std::invalid_argument("--final-attacks: the analysis needs an attack (e.g. pgd20)");
        study::Study s;
        s.title = study::data_and_model(base) +
                  ": confusion structure and cross-class similarity, natural vs adversarial training (Benz et al. §3.2)";
        s.arms = study::arms_for_methods("--methods", methods, base);
        s.attack = attacks.front();
        if (const int code = study::run_study(s, base.common, std::cout, study_flags); code != 0) return code;

        for (const study::RunSet& set : study::run_sets(s, base.common, study_flags))
            write_similarity(s, set, base.data.dataset);
        return 0;
    });
}
