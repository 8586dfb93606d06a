#pragma once
// The tables of a report: per evaluation (average, worst and best class, spread, SD, mean of the worst 10%), per
// class (accuracy under each evaluation, boundary error, CFP), and the training log. Every number is recomputed
// from the confusion matrices in results.json through fairness::class_metrics, so the page agrees with the metrics
// module by construction.
#include <nlohmann/json.hpp>

#include "eval/class_metrics.h"
#include "util/csv.h"
#include "report/html.h"

namespace cw::report {

fairness::ClassMetrics metrics_of(const nlohmann::json& evaluation);

HtmlTable summary_table(const nlohmann::json& results);
HtmlTable class_table(const nlohmann::json& results);
HtmlTable train_log_table(const util::CsvTable& train_log);

}  // namespace cw::report
