#pragma once
// What a grid's summary is made of (study/grid_summary.h): every cell's state and, per setting, the per-class clean
// and robust accuracies of its finished seeds, read from their results.json. One checkpoint and one attack serve the
// whole summary: the first finished cell's; a cell evaluated otherwise is listed as failed, not mixed in.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "study/grid.h"

namespace cw::study {

struct SettingRuns {
    std::string name, group, method;     // group: the class set ("cifar10", "gtsrb32 top:17")
    std::string pair_key;                // flags_without_method + group: natural and adversarial twins share it
    std::vector<std::string> classes;
    std::vector<uint64_t> seeds;         // the finished ones
    std::vector<std::vector<double>> clean, robust;   // [finished seed][class], fractions
};

struct CellStatus {
    std::string name, state;   // finished, missing, unfinished, failed: <line>
};

struct GatheredGrid {
    std::vector<SettingRuns> settings;            // in grid order
    std::vector<std::vector<std::string>> dirs;   // [setting][finished seed]: the cell's run folder
    std::vector<CellStatus> cells;
    std::string checkpoint, attack;               // what the summary compares; attack empty: clean only
};

// The cells of `grid` under `out` (a cell is finished when study::arm_finished says so; a failed one has its
// <cell>/job_error.txt, study/job_run.h). `defaults`, `extra` and `source` as cell_job takes them.
GatheredGrid gather_grid(const Grid& grid, const train::JobConfig& defaults, const std::vector<std::string>& extra,
                         const std::string& source, const std::string& out);

// The settings of each class set with at least one finished run; `order` gets the class sets in grid order.
std::map<std::string, std::vector<const SettingRuns*>> by_class_set(const GatheredGrid& g, std::vector<std::string>& order);

}  // namespace cw::study
