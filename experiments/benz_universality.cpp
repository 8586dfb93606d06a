// benz_universality — Benz et al., §3.1 "universality": is the per-class robustness ranking the same across
// datasets, architectures, optimisers, schedules, weight decay, and natural vs adversarial training? One binary
// drives a grid (study/grid.h: settings × seeds, each cell a whole resumable job) and gathers it
// (study/grid_summary.h: per-setting discrepancy, natural vs adversarial, and per dataset the Spearman matrix of
// per-class rankings next to the agreement between seeds — the noise floor a universal ranking must beat).
//
//   ./experiments/benz_universality [--quick] [--grid paper|quick|FILE.json] [--out DIR]   every unfinished cell, then
//                                                                                         the summary
//   ./experiments/benz_universality --grid G --print-grid          the resolved grid as JSON (edit it, pass it back)
//   ./experiments/benz_universality --grid G --list-cells          one cell id per line (for GNU parallel)
//   ./experiments/benz_universality --grid G --cell ID             one cell (an index, e.g. $SLURM_ARRAY_TASK_ID, or
//                                                                  <setting>/seed<k>); resumable
//   ./experiments/benz_universality --grid G --summary             gathers whatever cells are finished
// Every `train` flag given here applies to every cell, after the grid's own flags. docs/benz_universality.md has
// the grid format, GNU parallel and Slurm.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "util/atomic_file.h"
#include "study/grid.h"
#include "study/grid_summary.h"
#include "study/study.h"

namespace fs = std::filesystem;

namespace {

// The train flags given on the command line, as tokens: they are parsed again onto every cell's job, after the
// grid's, so the command line wins.
std::vector<std::string> given_train_flags(const std::vector<CLI::Option*>& options) {
    std::vector<std::string> tokens;
    for (const CLI::Option* o : options) {
        if (!o->count()) continue;
        if (o->get_expected_min() == 0) {   // a flag
            tokens.push_back(o->get_name());
            continue;
        }
        for (const std::string& r : o->results()) {
            tokens.push_back(o->get_name());
            tokens.push_back(r);
        }
    }
    return tokens;
}

// One cell: resumable (a finished cell is skipped, a half-done one continues). A failure leaves its one line in
// <cell>/grid_error.txt for the summary.
int run_cell(const cw::study::Grid& grid, const cw::study::GridCell& cell, const cw::train::JobConfig& defaults,
             const std::vector<std::string>& extra, const std::string& source, const cw::cli::CommonFlags& common) {
    using namespace cw;
    const fs::path dir = fs::path(common.out) / cell.name;
    const fs::path error_file = dir / "grid_error.txt";
    study::Arm arm;
    arm.name = cell.name;
    arm.job = study::cell_job(grid, cell, defaults, extra, source);
    cli::CommonFlags c = common;
    c.resume = true;
    try {
        std::cout << "== cell " << cell.index << " of " << study::grid_cells(grid).size() << ": ";
        const int code = study::run_arm(arm, c, dir.string(), std::cout, /*own_seed=*/true);
        if (code == 0) fs::remove(error_file);
        return code;
    } catch (const std::exception& e) {
        fs::create_directories(dir);
        util::write_file_atomic(error_file.string(), std::string(e.what()) + "\n");
        throw;
    }
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cw;
    // ---- the protocol's defaults (the grid's flags come on top; see study/grid_presets.cpp) -------------------
    train::JobConfig base;
    base.experiment = "benz_universality";
    base.common.out = "runs/benz_universality";
    base.final_attacks = "pgd20";
    base.final_checkpoints = "last";
    std::string grid_spec = "paper";
    std::string cell_id;
    bool print_grid = false, list_cells = false, summary_only = false;
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "benz_universality";
    spec.epochs_help = "training epochs of every cell (default: the grid's)";
    spec.resume_help = "accepted for symmetry: grid cells always resume (a finished cell is skipped, a half-done one continues)";
    spec.quick_preset = {{"--grid", "quick"}, {"--out", "runs/benz_universality_quick"}};
    spec.quick_what = "the quick grid: MNIST, Fashion-MNIST and CIFAR-10 subsets, small CNN and LeNet-5, natural "
                      "and PGD-AT, Adam vs SGD on CIFAR-10, 3 seeds, 2,000 training images, 2 epochs (36 cells, about 20 minutes on two cores)";
    CLI::App app{"classwise benz_universality: per-class robustness rankings across a grid of settings "
                 "(Benz et al. §3.1)", "benz_universality"};
    cli::add_common_flags(app, base.common, spec);
    app.get_option("--seed")->description("added to every seed of the grid (default 0: the grid's seeds as listed)");
    train::JobConfig scratch = base;   // the train flags land here first, and on every cell's job later
    const size_t before = app.get_options().size();
    train::add_job_flags(app, scratch);
    std::vector<CLI::Option*> train_options;
    for (size_t i = before; i < app.get_options().size(); ++i) train_options.push_back(app.get_options()[i]);
    app.add_option("--grid", grid_spec, "paper (Benz §3.1), quick (what --quick selects) or a grid JSON file")
        ->capture_default_str();
    app.add_flag("--print-grid", print_grid, "print the resolved grid as JSON and exit");
    app.add_flag("--list-cells", list_cells, "print one cell id per line and exit (for GNU parallel)");
    app.add_option("--cell", cell_id, "run this one cell only: its index (0-based, a Slurm array task id) or "
                                      "<setting>/seed<k>");
    app.add_flag("--summary", summary_only, "only gather the finished cells into the summary");
    // The --quick line goes to stderr: stdout of --list-cells is piped into `parallel` as cell ids.
    std::ostringstream parsed;
    if (const int code = cli::parse(app, argc, argv, base.common, spec, parsed, std::cerr); code >= 0) {
        std::cout << parsed.str();
        return code;
    }
    std::cerr << parsed.str();
    return cli::run_guarded("benz_universality", [&]() -> int {
        if (int(print_grid) + int(list_cells) + int(!cell_id.empty()) + int(summary_only) > 1)
            throw std::invalid_argument("--print-grid, --list-cells, --cell and --summary: give one of them");
        const study::Grid grid = study::load_grid(grid_spec);
        std::vector<std::string> extra = given_train_flags(train_options);
        if (app.get_option("--epochs")->count()) {
            extra.push_back("--epochs");
            extra.push_back(std::to_string(base.common.epochs));
        }
        base.common.epochs = 1;   // the cells' epochs come from the grid unless given here (then via `extra`)
        const auto cells = study::grid_cells(grid);
        for (const study::GridCell& c : cells)   // every setting checked before anything runs
            if (c.seed == 0) study::cell_job(grid, c, base, extra, grid_spec);
        if (print_grid) {
            std::cout << study::grid_to_json(grid).dump(2) << "\n";
            return 0;
        }
        if (list_cells) {
            for (const study::GridCell& c : cells) std::cout << c.index << "\n";
            return 0;
        }
        if (!cell_id.empty()) return run_cell(grid, study::find_cell(grid, cell_id), base, extra, grid_spec, base.common);
        if (!summary_only) {
            std::cout << "== " << grid.title << ": " << cells.size() << " cells (" << grid.settings.size()
                      << " settings × " << grid.seeds.size() << " seeds) into " << base.common.out << "\n";
            for (const study::GridCell& c : cells) {
                try {
                    if (const int code = run_cell(grid, c, base, extra, grid_spec, base.common); code != 0) return code;
                } catch (const std::exception& e) {
                    // A cell that cannot run (its dataset is not here) is listed by the summary; the rest go on.
                    std::cerr << "benz_universality: cell " << c.name << ": " << e.what() << "\n";
                }
            }
        }
        fs::create_directories(base.common.out);
        const int finished = study::write_grid_summary(grid, base, extra, grid_spec, base.common.out, std::cout);
        return finished == static_cast<int>(cells.size()) ? 0 : (summary_only ? 0 : 1);
    });
}
