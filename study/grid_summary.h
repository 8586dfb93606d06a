#pragma once
// The grid's summary (Benz et al. §3.1): gathers whatever cells are finished and writes
//   <out>/summary.md          per setting the seed-mean accuracy and discrepancy; natural vs adversarial per
//                             dataset; per dataset the Spearman matrices and the seed noise floor; missing cells
//   <out>/grid_summary.json   the same numbers (and every finished cell's per-class accuracies)
//   <out>/index.html          the tables and the heatmaps (figures in <out>/figures/)
//   <out>/compare/<dataset>/compare.html   the first finished seed of each setting, side by side (report/)
//
// Rankings are compared only within one class set (one dataset and --classes rule): classes of two datasets are
// not the same objects, so datasets are never correlated with each other.
//
// Agreement of per-class rankings, one dataset, settings a and b, each with its finished seeds' per-class
// accuracy vectors: M[a][b] = mean over pairs (run i of a, run j of b) of Spearman's ρ (eval/agreement.h);
// on the diagonal i ≠ j — the agreement between seeds of one setting, the noise floor a "universal" ranking must
// beat. Single runs on both sides, so off-diagonal and diagonal values are comparable. NaN pairs (a constant vector,
// e.g. every class at 0% robust accuracy) are left out.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "study/grid.h"
#include "study/grid_gather.h"

namespace cw::study {

struct Discrepancy {
    double mean = 0, spread = 0, sd = 0, worst = 0;   // class mean, best − worst, population SD, worst class's value
    int worst_class = -1;
};
// Of a per-class vector (NaN entries left out).
Discrepancy discrepancy(const std::vector<double>& per_class);
std::vector<double> mean_over_runs(const std::vector<std::vector<double>>& runs);

struct Agreement {
    std::vector<std::string> settings;
    std::vector<std::vector<double>> matrix;         // see above; NaN where no pair is defined
    double floor_mean = NAN, floor_min = NAN;        // over all seed pairs within settings
    double across_mean = NAN, across_min = NAN;      // over all run pairs of different settings
    int floor_pairs = 0, across_pairs = 0;
};
// `robust`: the robust accuracies, else the clean ones. Every setting's runs must have one class set.
Agreement ranking_agreement(const std::vector<const SettingRuns*>& settings, bool robust);

// Gathers the finished cells under `out` (a cell is finished when study::arm_finished says so) and writes the files
// above. A missing or failed cell (its <cell>/job_error.txt, study/job_run.h) is listed and skipped. Returns the number of
// finished cells.
int write_grid_summary(const Grid& grid, const train::JobConfig& defaults, const std::vector<std::string>& extra_flags,
                       const std::string& source, const std::string& out, std::ostream& log);

}  // namespace cw::study
