#pragma once
// Per-class accuracies of several evaluations side by side — Xu et al.'s Figure 1 (every class of every model,
// clean and under PGD at two radii) and Table 3 (average, worst and best class per model) as Markdown and CSV.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cw::protocols {

struct ClassColumn {
    std::string label;                 // e.g. "pgd_at PGD-20 4/255"
    double overall = 0;                // results.json "accuracy" (the sample average)
    std::vector<double> per_class;     // NaN for a class without samples
};

// The evaluation `evaluation` ("clean", "pgd20") of a results.json; throws naming `file` when it is absent.
ClassColumn class_column(const std::string& label, const nlohmann::json& results, const std::string& evaluation,
                         const std::string& file);

// One row per class, one column per evaluation, accuracies in % with one decimal.
std::string per_class_markdown(const std::vector<std::string>& classes, const std::vector<ClassColumn>& columns);
std::string per_class_csv(const std::vector<std::string>& classes, const std::vector<ClassColumn>& columns);

// One row per evaluation: average, worst class and best class (name and %), spread.
std::string extremes_markdown(const std::vector<std::string>& classes, const std::vector<ClassColumn>& columns);

}  // namespace cw::protocols
