#pragma once
// How the run page shows a corruption evaluation (eval/corruption_results.h): dozens of corrupted copies do not fit
// per-class bar groups, so instead a heatmap classes x corruptions of the pooled accuracy (clean first, all
// corruptions pooled last), a bar chart of each corruption's overall and worst-class accuracy, the confusion of
// clean and of all corruptions pooled, and a table of overall and worst-class accuracy per severity. The summary
// and per-class tables (report/summary.h) keep to clean and the pooled entries.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/gnuplot.h"
#include "report/html.h"

namespace cw::report {

// An evaluation scored on corrupted images (attack.type "corruption").
bool is_corruption_evaluation(const nlohmann::json& evaluation);
// A results.json holding corruption evaluations only (besides clean).
bool is_corruption_results(const nlohmann::json& results);
// A corruption entry for one severity ("corruption:fog:3"), not a pooled one.
bool is_single_severity(const nlohmann::json& evaluation);

// The entries the page's tables and heatmap show: clean, then "corruptions" (all pooled), then each corruption
// pooled over its severities, in file order.
std::vector<const nlohmann::json*> corruption_table_entries(const nlohmann::json& results);

std::vector<Figure> corruption_figures(const nlohmann::json& results, const std::string& prefix);
// Rows: corruptions; columns: overall and worst-class accuracy at each severity, and pooled.
HtmlTable corruption_severity_table(const nlohmann::json& results);

}  // namespace cw::report
