#pragma once
// Several runs lined up for comparison: one column per run (its chosen evaluation and the class metrics clean and
// under one attack), shared by the comparison page and the Markdown table the experiment binaries print.
#include <string>
#include <vector>

#include "eval/class_metrics.h"
#include "report/run_data.h"

namespace cw::report {

struct RunColumn {
    std::string label;                     // the fewest trailing path components that tell the runs apart
    const RunData* run = nullptr;
    const Evaluation* evaluation = nullptr;
    fairness::ClassMetrics clean, robust;  // robust: under Comparison::attack (empty metrics when there is none)
};

struct Comparison {
    std::vector<RunColumn> columns;
    std::string attack;                    // "" when the runs share no attack
    std::vector<std::string> classes;
};

// `checkpoint` empty: each run's first evaluation; `attack` empty: the first attack every run was evaluated under.
// Throws std::runtime_error naming the run or file when a run lacks the evaluation or the attack, or its classes
// differ from the first run's.
Comparison compare_runs(const std::vector<RunData>& runs, const std::string& checkpoint, const std::string& attack);
// The same with one checkpoint per run (a weight-averaged run is compared by its "ema_last" beside the others'
// "last").
Comparison compare_runs(const std::vector<RunData>& runs, const std::vector<std::string>& checkpoints,
                        const std::string& attack);

// One row per run: clean and robust average, worst class (name), bottom-3 mean, spread, and with 20 classes or
// more the mean of the worst 10% (FAIR-TAT's CIFAR-100 "worst class") — accuracies in %, one decimal (the papers'
// convention). GitHub-flavoured Markdown.
std::string markdown_table(const Comparison& c);

}  // namespace cw::report
