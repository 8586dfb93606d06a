// frl_tables — Xu et al., "To be Robust or to be Fair" (ICML 2021), §5: Fair Robust Learning against the plain
// adversarial trainings, Table 1 (CIFAR-10) / Table 2 (GTSRB) and Figure 3.
//   1. PGD-AT from scratch; its best_robust checkpoint (selected on the validation split) is the "hot start";
//   2. TRADES from scratch at each β the paper lists as TRADES(1/λ) (arms trades_beta1, trades_beta6);
//   3. from the hot start, fine-tuned with FRL's recipe (docs/protocols/frl.md §3: lr 0.001, 40 epochs; τ1/τ2 and β, lim
//      per variant as its script ran them, frl_resolved in frl.h — the paper's text τ1 = 0.05, τ2 = 0.07 are flags):
//      frl_baseline_rw (the paper's "Baseline Reweight", our reconstruction), frl_rw (Reweight), frl_rm
//      (Remargin), frl_rwrm (Reweight + Remargin);
//   4. each last model's average and worst-class clean, boundary and robust error under PGD-20 (Table 1), and for
//      every FRL arm the largest constraint violation over the classes, epoch by epoch (Figure 3:
//      max_violation.csv, from the per-class violations FRL writes to history.csv).
//
//   ./experiments/frl_tables [--quick] [--dataset cifar10 | --dataset gtsrb32 --classes top:17] [--resume]
// CIFAR-10: PreAct ResNet-18, ε = 8/255. GTSRB: FRL's 17 most frequent classes, the 4-layer CNN, ε = 12/255.
// --epochs trains PGD-AT and TRADES, --finetune-epochs the FRL arms. Every flag of `train` applies to every arm.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "util/atomic_file.h"
#include "protocols/argv_peek.h"
#include "study/cifar10_cpu_recipe.h"
#include "protocols/cpu_quick_recipe.h"
#include "protocols/frl_errors.h"
#include "protocols/frl_violation.h"
#include "protocols/gtsrb_recipe.h"
#include "report/run_data.h"
#include "study/run_sets.h"
#include "study/study.h"
#include "util/flags.h"
#include "util/split_list.h"

namespace fs = std::filesystem;

namespace {

using namespace cw;

// How the FRL arms fine-tune (docs/protocols/frl.md §3): epochs and rate from the hot start, ÷10 at epochs 40 and 80.
struct FineTune {
    int64_t epochs;
    double lr;
    std::string hot_start;   // empty: the pgd_at arm's best_robust checkpoint of the same seed
};

// The arms, in --methods order: trades becomes one arm per β; each frl_* arm fine-tunes the hot start.
std::vector<study::Arm> frl_arms(const train::JobConfig& base, const std::string& methods,
                                 const std::string& trades_betas, const FineTune& fine) {
    std::vector<study::Arm> arms;
    const std::vector<std::string> listed = util::split_list(methods);
    const bool has_pgd_at = std::find(listed.begin(), listed.end(), "pgd_at") != listed.end();
    for (const study::Arm& a : study::arms_for_methods("--methods", methods, base)) {
        if (a.name == "trades") {
            for (const std::string& b : util::split_list(trades_betas)) {
                study::Arm t = study::arm("trades_beta" + b, base, "trades");
                t.job.method_options.beta = util::positive_number("--trades-betas", b);
                arms.push_back(t);
            }
            continue;
        }
        study::Arm arm = a;
        if (a.name.rfind("frl_", 0) == 0) {
            if (fine.hot_start.empty() && !has_pgd_at)
                throw std::invalid_argument("--methods: the FRL arms fine-tune PGD-AT's best_robust checkpoint: keep "
                                            "pgd_at in --methods or give --hot-start FILE");
            if (fine.hot_start.empty()) {   // the pgd_at arm of the same seed (study/jobs.h: a dependency)
                arm.init_arm = "pgd_at";
                arm.init_file = "best_robust.safetensors";
            } else {
                arm.job.init = fine.hot_start;
            }
            arm.job.common.epochs = fine.epochs;
            arm.job.trainer.recipe.lr = fine.lr;
            arm.job.trainer.recipe.schedule = "multistep";
            arm.job.trainer.recipe.milestones = {40, 80};
            arm.job.trainer.recipe.gamma = 0.1;
        }
        arms.push_back(arm);
    }
    return arms;
}

// Table 1 from the arms' last models, Figure 3 from the FRL arms' histories, for one set of runs (study/run_sets.h):
// frl_table.md and max_violation.csv in the set's folder.
void write_table1_and_figure3(const study::Study& s, const study::RunSet& set) {
    std::vector<protocols::ErrorRow> rows;
    std::vector<std::string> classes;
    std::vector<protocols::RunViolations> violations;
    std::string figure3;
    for (const study::Arm& a : s.arms) {
        const std::string& dir = set.dir(a.name);
        const std::string file = dir + "/eval_last/results.json";
        const nlohmann::json r = report::load_results_json(file);
        classes = r.at("classes").get<std::vector<std::string>>();
        rows.push_back(protocols::error_row(a.name, r, "pgd20", file));
        if (a.job.method.rfind("frl_", 0) != 0) continue;
        violations.push_back({a.name, protocols::read_max_violations(dir)});
        figure3 += "### " + a.name + "\n\n" + protocols::max_violations_markdown(violations.back(), classes) + "\n";
    }
    const std::string md = "# " + set.titled(s.title) + "\n\nLast checkpoints; errors in % (std = clean, bdy = boundary = "
                           "clean accuracy − PGD-20 accuracy, rob = PGD-20); avg over samples, worst over classes."
                           "\n\n## Table 1\n\n" + protocols::error_table_markdown(rows, classes) +
                           "\n## Figure 3: largest constraint violation per epoch (measured on the validation split "
                           "at the start of the epoch; ≤ 0: every class meets it)\n\n" + figure3;
    const fs::path out(set.out);
    fs::create_directories(out);
    util::write_file_atomic((out / "frl_table.md").string(), md);
    util::write_file_atomic((out / "max_violation.csv").string(), protocols::max_violations_csv(violations, classes));
    std::cout << "\n" << md << "wrote " << (out / "frl_table.md").string() << " and "
              << (out / "max_violation.csv").string() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cw;
    const std::string dataset = protocols::peek_flag(argc, argv, "--dataset", "cifar10");
    const bool gtsrb = dataset.rfind("gtsrb", 0) == 0;
    // ---- the paper's setting (every value is a flag) ---------------------------------------------------------
    train::JobConfig base;
    base.experiment = "frl_tables";
    base.common.out = "runs/frl_tables";
    base.data.dataset = dataset;
    base.data.pad_mode = "zeros";         // FRL's code: zero padding, no normalisation
    base.data.normalize = "none";
    base.data.val_split = "last:300";     // FRL: the last 300 training images of each class validate
    base.final_attacks = "pgd20";
    base.final_checkpoints = "last";      // FRL's code reports the last model
    std::string trades_betas = "1,6";     // the TRADES(1/λ) rows
    int64_t finetune_epochs = 40;         // docs/protocols/frl.md §3: T = 40
    double finetune_lr = 0.001;           // docs/protocols/frl.md §3: SGD 0.9, wd 5e-4, ÷10 at epochs 40 and 80
    std::string hot_start;                // empty: <out>/pgd_at/best_robust.safetensors
    if (dataset == "cifar10") {
        base.arch = "preact_resnet18";
        base.eps = "8/255";
        base.common.epochs = 200;         // PGD-AT / TRADES from scratch: the shared Rice recipe (docs/protocols/training.md §3)
    } else if (gtsrb) {
        // docs/protocols/frl.md §5: 17 classes, a 4-layer CNN, ε = 12/255; the rest is unspecified (our choices: Adam as the project's
        // GTSRB baselines, 100 validation images per class — the smallest kept class has 555).
        protocols::use_gtsrb_recipe(base);
        base.data.classes = "top:17";
        base.data.val_split = "last:100";
        finetune_lr = 1e-4;
    } else {
        base.common.epochs = 10;          // no paper setting: the job's defaults (train --help)
    }
    std::string methods = "pgd_at,trades,frl_baseline_rw,frl_rw,frl_rm,frl_rwrm";
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "frl_tables";
    spec.epochs_help = "training epochs of PGD-AT and TRADES (the FRL arms: --finetune-epochs)";
    spec.quick_preset = protocols::cpu_quick_recipe({{"--train-n", "4000"}, {"--epochs", "5"},
                                                     {"--finetune-epochs", "3"}, {"--finetune-lr", "0.0005"},
                                                     {"--frl-val-steps", "10"}, {"--val-split", "last:50"},
                                                     {"--eval-n", "1000"}, {"--epoch-eval-n", "300"},
                                                     {"--out", "runs/frl_tables_quick"}});
    spec.quick_what = "LeNet-5 on 4,000 real training images: 5 epochs from scratch, 3 of FRL fine-tuning";
    if (dataset == "cifar10")
        spec.presets.push_back({"--cpu-scale",
                                "the CIFAR-10 CPU recipe (WideResNet-16-1, PGD-2 training, 9 one-cycle epochs; "
                                "study/cifar10_cpu_recipe.h) on the training set less FRL's validation images, "
                                "FRL fine-tuning 2 epochs at lr 0.01, about 3 hours on two cores",
                                study::cifar10_cpu_recipe({{"--val-split", "last:300"}, {"--finetune-epochs", "2"},
                                                               {"--finetune-lr", "0.01"},
                                                               {"--out", "runs/frl_tables_cpu"}})});
    cli::FlagSet app{"classwise frl_tables: PGD-AT, TRADES and FRL's three variants per class, with the constraint "
                     "violations per epoch (Xu et al. §5)",
                     "frl_tables"};
    study::StudyFlags study_flags;
    // The paper's architecture and radius for this dataset, shown by --help and --print-config.
    study::add_experiment_flags(app, base, spec, study_flags, {"--arch", "--eps"});
    app.remove("--method");
    app.remove("--init");
    app.option("--methods", methods, "the arms, in order; trades expands to one arm per --trades-betas value")
        .show_default();
    app.option("--trades-betas", trades_betas, "TRADES β values, one arm each (the paper's TRADES(1/λ) rows)")
        .show_default();
    app.option("--finetune-epochs", finetune_epochs, "epochs of the FRL arms from the hot start (docs/protocols/frl.md §3: 40)")
        .range(int64_t{1}, int64_t{1000000}).show_default();
    app.option("--finetune-lr", finetune_lr, "learning rate of the FRL arms (÷10 at epochs 40 and 80; docs/protocols/frl.md §3: 0.001)")
        .range(1e-9, 1e3).show_default();
    app.option("--hot-start", hot_start, "the FRL arms' initial weights (default: <out>/pgd_at/best_robust.safetensors, "
                                             "so pgd_at must be among --methods)")
        .existing_file();
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("frl_tables", [&] {
        study::Study s;
        s.title = base.data.dataset + (base.data.classes == "all" ? "" : " (" + base.data.classes + ")") + ", " +
                  (base.arch.empty() ? train::default_arch(dataset) : base.arch) +
                  ": PGD-AT, TRADES and FRL per class (Xu et al. §5)";
        s.attack = "pgd20";
        s.arms = frl_arms(base, methods, trades_betas, FineTune{finetune_epochs, finetune_lr, hot_start});
        if (const int code = study::run_study(s, base.common, std::cout, study_flags); code != 0) return code;
        for (const study::RunSet& set : study::run_sets(s, base.common, study_flags)) write_table1_and_figure3(s, set);
        return 0;
    });
}
