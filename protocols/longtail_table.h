#pragma once
// Benz et al. §3.3, scenario 2's question per arm: did the remedy raise the critical class, and at what cost to the
// other classes? For one evaluation (clean, or under the attack) and each arm, against the baseline arm (PGD-AT):
//   critical         the critical class's accuracy, and its change against the baseline
//   average          the class mean (classes without samples left out), and its change
//   worst            the worst class (lowest index on ties) and its accuracy, and the change of the worst accuracy
//                    (which may be another class's than the baseline's worst)
//   others_delta     the mean over the other classes k ≠ c* of (arm_k − baseline_k): the cost to them
// All accuracies are fractions; changes are differences of fractions (the Markdown prints points).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cw::protocols {

struct ArmAccuracy {
    std::string arm;
    std::vector<double> per_class;   // one per class; NaN for a class without samples
};

struct CriticalRow {
    std::string arm;
    double critical = 0, critical_delta = 0;
    double average = 0, average_delta = 0;
    int worst = -1;
    double worst_value = 0, worst_delta = 0;
    double others_delta = 0;
};

struct CriticalTable {
    std::string evaluation;          // "clean", "pgd20"
    int critical = -1;
    int baseline = 0;                // position of the baseline arm in `rows`
    std::vector<CriticalRow> rows;   // one per arm, in the given order (the baseline's changes are 0)
};

// Throws std::invalid_argument when an arm's class count differs, the critical class is out of range or the
// baseline is not among the arms.
CriticalTable critical_table(const std::string& evaluation, const std::vector<ArmAccuracy>& arms,
                             const std::string& baseline, int critical);

// One table per evaluation: the arms as rows, the critical class named (bold) in the header.
std::string critical_markdown(const CriticalTable& table, const std::vector<std::string>& classes);
// Every class (rows) × every arm and evaluation (columns), the critical class's row in bold and marked.
std::string critical_per_class_markdown(const std::vector<std::string>& classes, int critical,
                                        const std::vector<std::string>& column_labels,
                                        const std::vector<std::vector<double>>& columns);
// The same tables as HTML (report/html.h), the critical class's cells with the CSS class "critical".
std::string critical_html(const CriticalTable& table, const std::vector<std::string>& classes);
std::string critical_per_class_html(const std::vector<std::string>& classes, int critical,
                                    const std::vector<std::string>& column_labels,
                                    const std::vector<std::vector<double>>& columns);
nlohmann::json critical_json(const CriticalTable& table, const std::vector<std::string>& classes);

}  // namespace cw::protocols
