// xu_preliminary — Xu et al., "To be Robust or to be Fair" (ICML 2021), §2: adversarial training treats classes
// unequally where natural training does not. The same network is trained three ways and audited class by class:
//   1. natural training, PGD-AT (Madry et al.) and TRADES (Zhang et al., β = 1/λ = 6), same data and seed;
//   2. each model's clean and PGD-20 accuracy per class at the training radius (8/255 on CIFAR-10) — Figure 1 and
//      Table 3 (average, worst and best class) — and again at a second, smaller radius (4/255, Figure 1's second
//      attack), which a job cannot give its own attacks: a second evaluation pass (protocols/second_radius.h);
//   3. the per-class table, the Table-3 summary, the study's comparison page and summary.md.
//
//   ./experiments/xu_preliminary [--quick] [--dataset cifar10|gtsrb32] [--epochs N] [--low-eps 4/255] [--resume]
// CIFAR-10: PreAct ResNet-18, ε = 8/255 (the paper: "ResNet18"). --dataset gtsrb32: all 43 classes, the 4-layer
// GTSRB CNN (the paper: a 3-layer CNN), ε = 12/255 (its appendix table). Every flag of `train` applies to every
// arm; --methods replaces --method.
#include <filesystem>
#include <iostream>

#include "util/atomic_file.h"
#include "util/format.h"
#include "jobs/audit.h"
#include "protocols/argv_peek.h"
#include "protocols/class_columns.h"
#include "study/cifar10_cpu_recipe.h"
#include "protocols/cpu_quick_recipe.h"
#include "protocols/gtsrb_recipe.h"
#include "protocols/second_radius.h"
#include "report/run_data.h"
#include "study/run_sets.h"
#include "study/study.h"
#include "util/flags.h"

namespace fs = std::filesystem;

namespace {

// For one set of runs (study/run_sets.h): each arm's last checkpoint evaluated at the second radius (unless `second`
// is 0), then Figure 1 (every class) and Table 3 (average, worst and best class): xu_table.md and per_class.csv in
// the set's folder.
void write_figure1_and_table3(const cw::study::Study& s, const cw::train::JobConfig& base, const cw::study::RunSet& set,
                              float eps, float second) {
    using namespace cw;
    std::vector<protocols::ClassColumn> columns;
    std::vector<std::string> classes;
    const std::string eps_text = util::radius_text(eps), low_text = util::radius_text(second);
    for (const study::Arm& a : s.arms) {
        train::JobConfig job = a.job;
        job.common = base.common;
        job.common.out = set.dir(a.name);
        job.common.seed = set.run_seed;   // the seed the arm's own final evaluation used
        if (second > 0) protocols::evaluate_second_radius(job, second, {"pgd20"}, std::cout);
        const std::string file = job.common.out + "/eval_last/results.json";
        const nlohmann::json r = report::load_results_json(file);
        classes = r.at("classes").get<std::vector<std::string>>();
        columns.push_back(protocols::class_column(a.name + " clean", r, "clean", file));
        columns.push_back(protocols::class_column(a.name + " PGD-20 " + eps_text, r, "pgd20", file));
        if (second > 0) {
            const std::string low = job.common.out + "/" + protocols::second_radius_folder("last", second) + "/results.json";
            columns.push_back(protocols::class_column(a.name + " PGD-20 " + low_text, report::load_results_json(low),
                                                      "pgd20", low));
        }
    }
    const std::string md = "# " + set.titled(s.title) + "\n\nLast checkpoint; accuracies in %; PGD-20 with α = ε/4 and one random "
                           "start.\n\n## Average, worst and best class (Table 3)\n\n" +
                           protocols::extremes_markdown(classes, columns) + "\n## Every class (Figure 1)\n\n" +
                           protocols::per_class_markdown(classes, columns);
    const fs::path out(set.out);
    fs::create_directories(out);
    util::write_file_atomic((out / "xu_table.md").string(), md);
    util::write_file_atomic((out / "per_class.csv").string(), protocols::per_class_csv(classes, columns));
    std::cout << "\n" << md << "\nwrote " << (out / "xu_table.md").string() << " and " << (out / "per_class.csv").string()
              << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cw;
    const std::string dataset = protocols::peek_flag(argc, argv, "--dataset", "cifar10");
    const bool gtsrb = dataset.rfind("gtsrb", 0) == 0;
    // ---- the paper's setting (every value is a flag) ---------------------------------------------------------
    train::JobConfig base;
    base.experiment = "xu_preliminary";
    base.common.out = "runs/xu_preliminary";
    base.data.dataset = dataset;
    base.data.pad_mode = "zeros";         // FRL's code is TRADES': zero padding, no normalisation
    base.data.normalize = "none";
    base.final_attacks = "pgd20";         // FRL's tables: PGD-20, α = ε/4, one random start
    base.final_checkpoints = "last,best_robust";
    base.method_options.beta = 6;         // TRADES(1/λ = 6)
    std::string low_eps = "4/255";        // Figure 1's second radius
    if (dataset == "cifar10") {
        // The shared recipe (docs/protocols/training.md §3, Rice et al.): the paper gives none for §2. SGD 0.9, wd 5e-4, lr 0.1
        // ÷10 at 50% and 75%, batch 128, 200 epochs; crop+flip.
        base.arch = "preact_resnet18";
        base.eps = "8/255";
        base.common.epochs = 200;
    } else if (gtsrb) {
        protocols::use_gtsrb_recipe(base);   // the paper gives ε only; the rest is ours (protocols/gtsrb_recipe.h)
        low_eps = "6/255";                // half the training radius, as 4/255 is of 8/255 (our choice)
    } else {
        base.common.epochs = 10;          // no paper setting: the job's defaults (train --help)
    }
    std::string methods = "natural,pgd_at,trades";
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "xu_preliminary";
    spec.epochs_help = "training epochs of every model";
    // PRN-18 trains at ~10 images/s with PGD-10 on two cores (docs/speed.md): the quick run is the CPU recipe's LeNet-5
    // (protocols/cpu_quick_recipe.h), five epochs on 5,000 images.
    spec.quick_preset = protocols::cpu_quick_recipe({{"--train-n", "5000"}, {"--epochs", "5"}, {"--eval-n", "1000"},
                                                     {"--epoch-eval-n", "500"}, {"--out", "runs/xu_preliminary_quick"}});
    spec.quick_what = "LeNet-5 on 5,000 real training images, 5 epochs, 5-step attacks, 1,000 test images";
    if (dataset == "cifar10")
        spec.presets.push_back({"--cpu-scale",
                                "the CIFAR-10 CPU recipe (WideResNet-16-1, PGD-2 training, 9 one-cycle epochs; "
                                "study/cifar10_cpu_recipe.h) on all 49,000 training images, three models, about 2 "
                                "hours on two cores",
                                study::cifar10_cpu_recipe({{"--out", "runs/xu_preliminary_cpu"}})});
    cli::FlagSet app{"classwise xu_preliminary: natural vs PGD-AT vs TRADES per class, PGD-20 at two radii (Xu et al. §2)",
                     "xu_preliminary"};
    study::StudyFlags study_flags;
    // The paper's architecture and radius for this dataset, shown by --help and --print-config.
    study::add_experiment_flags(app, base, spec, study_flags, {"--arch", "--eps"});
    study::add_methods_flag(app, methods);
    app.option("--low-eps", low_eps, "second PGD-20 radius of the final evaluation (Figure 1: 4/255 on CIFAR-10); "
                                         "none to skip")
        .show_default();
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("xu_preliminary", [&] {
        const float eps = base.eps.empty() ? train::default_eps(base.data.dataset) : eval::parse_fraction("--eps", base.eps);
        const float second = low_eps == "none" ? 0.f : eval::parse_fraction("--low-eps", low_eps);
        study::Study s;
        s.title = study::data_and_model(base) +
                  ": per-class accuracy after natural, PGD and TRADES adversarial training (Xu et al. §2)";
        s.arms = study::arms_for_methods("--methods", methods, base);
        s.attack = "pgd20";
        if (const int code = study::run_study(s, base.common, std::cout, study_flags); code != 0) return code;

        for (const study::RunSet& set : study::run_sets(s, base.common, study_flags))
            write_figure1_and_table3(s, base, set, eps, second);
        return 0;
    });
}
