#pragma once
// Benz et al. §3.1, "whether the vulnerable class changes during the training": the per-class accuracies of the
// per-epoch evaluation (history.csv, train/history.h) read as one series per evaluation ("test_clean",
// "test_pgd10", ...), and per series the worst class of every evaluated epoch, how often and when it changes, the
// epoch from which it stays the same, how stable the per-class ranking is (Spearman's ρ between consecutive
// evaluations and against the last one) and the spread (best − worst class) per epoch.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/csv.h"

namespace cw::protocols {

struct ClassSeries {
    std::string eval;                              // history.csv's "eval" column, e.g. "test_pgd10"
    std::vector<int64_t> epochs;                   // in file order
    std::vector<double> overall;                   // sample accuracy per epoch (NaN if empty)
    std::vector<std::vector<double>> per_class;    // [epoch row][class]; NaN: a class without samples
};

// The per-epoch evaluations of a history.csv (rows whose eval starts with "test_", "val_", "ema_test_" or
// "ema_val_"; the training rows are accuracies on moving batches, the state rows are not accuracies), one series
// each in first-seen order. A repeated epoch of one series keeps its later row. Throws naming `source` when the
// header is not epoch,eval,overall,<one column per class> or a field is not a number.
std::vector<ClassSeries> history_series(const util::CsvTable& history, size_t num_classes, const std::string& source);

struct TrendAnalysis {
    std::string eval;
    std::vector<int64_t> epochs;
    std::vector<int> worst;                // worst class per epoch (lowest index on ties; -1: no class defined)
    std::vector<int> tied;                 // how many classes share that lowest accuracy (several at 0% early on
                                           // make a change of the worst class a matter of the tie rule)
    std::vector<double> worst_accuracy, spread, class_mean;
    int changes = 0;                       // evaluations whose worst class differs from the previous evaluation's
    std::vector<int64_t> change_epochs;    // the epochs at which a new worst class appeared
    int changes_at_ties = 0;               // of those, epochs where the new worst class shares its accuracy
    int64_t stable_from = -1;              // first epoch of the final unbroken run of the last worst class
    int distinct_worst = 0;                // how many classes were the worst at some epoch
    std::vector<double> spearman_previous; // ρ(epoch e, the evaluation before it); NaN for the first
    std::vector<double> spearman_last;     // ρ(epoch e, the last evaluation)
};

TrendAnalysis analyse_trend(const ClassSeries& series);

nlohmann::json trend_json(const TrendAnalysis& t, const std::vector<std::string>& classes);

// One arm's section: a summary line per series, then a per-epoch table (worst class, its accuracy, spread, ρ).
std::string trends_markdown(const std::string& arm, const std::vector<TrendAnalysis>& trends,
                            const std::vector<std::string>& classes);

}  // namespace cw::protocols
