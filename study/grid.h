#pragma once
// A grid of training runs (Benz et al. §3.1, "universality"): settings × seeds, each cell one whole job (jobs/job.h)
// in its own folder. benz_universality runs it as a study (study/study.h) whose arms are the settings and whose
// seeds are the grid's, so a cell is a study job — --list-jobs, --job, --summary, --slurm like every experiment
// binary (docs/cluster.md) — and the study's summary is the grid's (study/grid_summary.h).
//
// A grid is JSON:
//   {"title": "...", "seeds": [0, 1, 2],
//    "base": "--epochs 2 --train-n 2000",                      // train flags of every cell (a string or a list)
//    "settings": [{"name": "mnist-lenet5-natural", "flags": "--dataset mnist --arch lenet5 --method natural"}, ...]}
// The flags are ordinary `train` flags, parsed by the parser `train` uses (train::add_job_flags, plus --epochs), so
// every train flag works in a grid. Applied in order: the binary's defaults, "base", the setting's flags, then the
// train flags given on the command line (they win, as a flag given beside --quick does).
//
// Cells: cell i = seed index i / S, setting i % S (S settings): seed-major, so a grid run in order, or a partly
// finished array, covers every setting with its first seed before any second one — the order of the study's jobs.
// A cell's name is "<setting>/seed<k>", its folder <out>/<setting>/seed<k>/: the study job's id and folder.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "jobs/job.h"

namespace cw::study {

struct GridSetting {
    std::string name;                     // folder name: letters, digits, . _ + - only
    std::vector<std::string> flags;       // train flags, one token each
};

struct Grid {
    std::string title;
    std::vector<uint64_t> seeds;
    std::vector<std::string> base_flags;
    std::vector<GridSetting> settings;
};

struct GridCell {
    int index = 0;
    size_t setting = 0, seed = 0;         // indices into Grid::settings and Grid::seeds
    std::string name;                     // "<setting>/seed<k>"
};

// Reads a grid; `source` names it in errors ("grid 'x.json': setting 'a': --lr: ..."). Checks the shape, the names
// (unique, folder-safe), the seeds (unique) and every setting's flags (through cell_job on a default job).
Grid grid_from_json(const nlohmann::json& j, const std::string& source);
nlohmann::json grid_to_json(const Grid& g);

// "paper" (Benz §3.1), "quick" (a small real-data grid), "cpu" (CIFAR-10 at the CPU recipe) or a JSON file's path.
Grid load_grid(const std::string& spec);
Grid paper_grid();
Grid quick_grid();
Grid cpu_grid();

// A flag string split at white space ("--dataset cifar10 --arch vgg16" → 4 tokens; no quoting).
std::vector<std::string> split_flags(const std::string& text);

std::vector<GridCell> grid_cells(const Grid& g);

// The cell's job: `defaults` with the base flags, the setting's flags and `extra_flags` parsed onto it, the seed
// set to the cell's. Throws "<source>: setting '<name>': <flag error>" on a bad flag.
train::JobConfig cell_job(const Grid& g, const GridCell& cell, const train::JobConfig& defaults,
                          const std::vector<std::string>& extra_flags = {}, const std::string& source = "grid");

// Parses train flags onto `job` (train::add_job_flags plus --epochs); throws std::invalid_argument with CLI11's
// message (it names the flag) on an unknown flag or bad value, and on an unknown --method or --arch.
void apply_train_flags(train::JobConfig& job, const std::vector<std::string>& flags);

// The setting's flags without its --method and value: two settings that differ only in the method share it (the
// natural-vs-adversarial pairs of the summary).
std::string flags_without_method(const GridSetting& s);

}  // namespace cw::study
