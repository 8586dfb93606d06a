// benz_universality — Benz et al., §3.1 "universality": is the per-class robustness ranking the same across
// datasets, architectures, optimisers, schedules, weight decay, and natural vs adversarial training? One binary
// drives a grid (study/grid.h: settings × seeds, each cell a whole resumable job) and gathers it
// (study/grid_summary.h: per-setting discrepancy, natural vs adversarial, and per dataset the Spearman matrix of
// per-class rankings next to the agreement between seeds — the noise floor a universal ranking must beat).
//
//   ./experiments/benz_universality [--quick] [--grid paper|quick|cpu|FILE.json] [--out DIR]   every unfinished cell, then
//                                                                                         the summary
//   ./experiments/benz_universality --grid G --print-grid          the resolved grid as JSON (edit it, pass it back)
// The cells are the jobs of a study (study/grid_study.h): --list-jobs, --job <setting>/seed<k>, --summary, --slurm
// and --seeds (instead of the grid's seeds) as in every experiment binary (docs/cluster.md).
// Every `train` flag given here applies to every cell, after the grid's own flags. docs/benz_universality.md has
// the grid format, GNU parallel and Slurm.
#include <iostream>

#include "study/grid.h"
#include "study/grid_study.h"
#include "study/study.h"
#include "util/flags.h"

int main(int argc, char** argv) {
    using namespace cw;
    // ---- the protocol's defaults (the grid's flags come on top; see study/grid_presets.cpp) -------------------
    train::JobConfig base;
    base.experiment = "benz_universality";
    base.common.out = "runs/benz_universality";
    base.final_attacks = "pgd20";
    base.final_checkpoints = "last";
    base.common.resume = true;   // cells always resume: a finished cell is skipped, a half-done one continues
    std::string grid_spec = "paper";
    bool print_grid = false;
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "benz_universality";
    spec.epochs_help = "training epochs of every cell (default: the grid's)";
    spec.resume_help = "accepted for symmetry: grid cells always resume (a finished cell is skipped, a half-done one continues)";
    spec.quick_preset = {{"--grid", "quick"}, {"--out", "runs/benz_universality_quick"}};
    spec.quick_what = "the quick grid: MNIST, Fashion-MNIST and CIFAR-10 subsets, small CNN and LeNet-5, natural "
                      "and PGD-AT, Adam vs SGD on CIFAR-10, 3 seeds, 2,000 training images, 2 epochs (36 cells, about 20 minutes on two cores)";
    spec.presets.push_back({"--cpu-scale",
                            "the cpu grid: CIFAR-10 at the CPU recipe (study/cifar10_cpu_recipe.h) on the whole "
                            "training set, WideResNet-16-1 and -10-2, natural and PGD-AT, three seeds: 12 runs, about "
                            "6 hours on two cores",
                            {{"--grid", "cpu"}, {"--out", "runs/benz_universality_cpu"}}});
    cli::FlagSet app{"classwise benz_universality: per-class robustness rankings across a grid of settings "
                     "(Benz et al. §3.1)", "benz_universality"};
    cli::add_common_flags(app, base.common, spec);
    app.get("--seed").description("added to every seed of the grid (default 0: the grid's seeds as listed)");
    study::StudyFlags study_flags;
    study::add_study_flags(app, study_flags);
    app.get("--seeds").description("comma-separated: the cells' seeds instead of the grid's (each cell in "
                                           "<out>/<setting>/seed<k>/, trained with --seed + k)");
    train::JobConfig scratch = base;   // the train flags land here first, and on every cell's job later
    const size_t first_train_flag = app.size();
    train::add_job_flags(app, scratch);
    const size_t end_train_flags = app.size();
    app.option("--grid", grid_spec, "paper (Benz §3.1), quick (what --quick selects), cpu (what --cpu-scale selects) or a grid JSON file")
        .show_default();
    app.flag("--print-grid", print_grid, "print the resolved grid as JSON and exit");
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("benz_universality", [&]() -> int {
        const bool mode = study_flags.list_jobs || !study_flags.job.empty() || study_flags.summary || study_flags.slurm;
        if (print_grid && mode)
            throw std::invalid_argument("--print-grid: give it alone (not with --list-jobs, --job, --summary, --slurm)");
        const study::Grid grid = study::with_seeds(study::load_grid(grid_spec), study_flags.seeds);
        // The train flags given on the command line, parsed again onto every cell's job after the grid's, so the
        // command line wins.
        std::vector<std::string> extra = app.given_tokens(first_train_flag, end_train_flags);
        if (app.get("--epochs").given()) {
            extra.push_back("--epochs");
            extra.push_back(std::to_string(base.common.epochs));
        }
        base.common.epochs = 1;   // the cells' epochs come from the grid unless given here (then via `extra`)
        if (print_grid) {
            std::cout << study::grid_to_json(grid).dump(2) << "\n";
            return 0;
        }
        // Every setting is checked (cell_job) before anything runs.
        const study::Study s = study::grid_study(grid, base, extra, grid_spec, study_flags.seeds);
        return study::run_study(s, base.common, std::cout, study_flags);
    });
}
