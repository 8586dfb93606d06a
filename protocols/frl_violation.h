#pragma once
// FRL's Figure 3: the largest constraint violation over the classes, epoch by epoch. FRL's constraint for class i
// is satisfied when its violation γ(i) = e(i) − E − τ ≤ 0 (clean error against τ1, boundary error against τ2;
// docs/protocols/frl.md §2; frl_baseline_rw: robust error against τ). At the start of every epoch the method measures γ on
// the validation split — on the model the epoch starts from, the hot start in epoch 1 — and the trainer writes it
// to history.csv as the rows state_violation_nat, state_violation_bdy (frl_baseline_rw: state_violation_rob).
// max_i γ(i) ≤ 0 means every class meets the constraint.
#include <cstdint>
#include <string>
#include <vector>

#include "util/csv.h"

namespace cw::protocols {

struct MaxViolation {
    int64_t epoch = 0;        // history.csv's 1-based epoch: measured before that epoch trained
    std::string constraint;   // nat, bdy or rob (the row name after "state_violation_")
    double value = 0;         // max_i γ(i)
    int cls = -1;             // the class attaining it (lowest index on ties)
};

// Every state_violation_* row of a history.csv table, in file order. Throws naming `source` on a malformed row;
// empty when the run wrote no violations (not an FRL run).
std::vector<MaxViolation> max_violations(const util::CsvTable& history, const std::string& source);
// The same from <run_dir>/history.csv.
std::vector<MaxViolation> read_max_violations(const std::string& run_dir);
// The class names of a history.csv table (the columns after epoch, eval, overall).
std::vector<std::string> history_classes(const util::CsvTable& history);

// run,epoch,constraint,max_violation,class — one line per arm, epoch and constraint.
struct RunViolations {
    std::string run;
    std::vector<MaxViolation> rows;
};
std::string max_violations_csv(const std::vector<RunViolations>& runs, const std::vector<std::string>& classes);
// One Markdown table per run: an epoch per row, a column per constraint ("0.123 (cat)"), and whether all hold.
std::string max_violations_markdown(const RunViolations& run, const std::vector<std::string>& classes);

}  // namespace cw::protocols
