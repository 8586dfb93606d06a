#pragma once
// Several runs side by side (methods as columns): average, worst class and spread, clean and under one attack;
// per-class bars grouped by class; and Spearman's rank correlation of the per-class accuracies between every two
// runs (is the most vulnerable class the same?). Written as <out_dir>/compare.html with figures/ beside it.
#include <string>
#include <vector>

#include "report/run_data.h"

namespace cw::report {

struct CompareOptions {
    std::string checkpoint;   // which evaluation of each run ("last", "best_robust"); empty: each run's first
    std::vector<std::string> checkpoints;   // one per run instead (a study's weight-averaged arms: "ema_last")
    std::string attack;       // the robust column; empty: the first attack every run was evaluated under
    bool figures = true;
};

// Throws std::runtime_error naming the run when a run has no such evaluation or its classes differ.
std::string write_compare_page(const std::vector<RunData>& runs, const std::string& out_dir,
                               const CompareOptions& options = {});

}  // namespace cw::report
