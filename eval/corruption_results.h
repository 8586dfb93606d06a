#pragma once
// results.json of a corruption evaluation (eval/corruption_eval.h), on the contract of
// docs/results_json.md. Evaluations, in this order:
//   clean
//   corruptions              every corruption at every severity, pooled
//   corruption:<name>        one corruption, its severities pooled
//   corruption:<name>:<s>    one corruption at one severity
// each with attack {"type": "corruption", "name", "severity", "source", ...}. A pooled entry is computed from the
// records stacked over its severities (N·S samples: its confusion is the sum of theirs), through results_json like
// any other, and says what it pools in "pooled_over" and "num_samples"; its class_counts are then N_k·S.
//
// Unlike an attack, a corruption is scored by plain accuracy on the corrupted image: adv_pred holds the raw
// prediction, so a clean-wrong sample that is right when corrupted counts as right. per_class_boundary_error
// (clean − corrupted accuracy) can therefore be negative, for a class the corruption happens to help;
// per_class_boundary_error_exact still counts only the clean-correct samples the corruption breaks.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/eval_records.h"
#include "eval/results_json.h"

namespace cw::eval {

// One corruption at its severities.
struct CorruptionRun {
    std::string name;
    std::string source;                       // "cifar10-c" (the official .npy) or "generated" (datasets/corruptions.h)
    std::string file;                         // the .npy read (cifar10-c)
    uint64_t seed = 0;                        // the corruptions' seed (generated)
    std::vector<int> severities;
    std::vector<std::vector<int32_t>> pred;   // [severity][sample]: argmax f(corrupted x), raw
    std::vector<double> time_s;               // [severity]: corrupting and predicting
};

// "corruption:<name>:<s>", "corruption:<name>", and "corruptions" for all of them pooled.
std::string corruption_eval_name(const std::string& name, int severity = 0);
inline const char* all_corruptions_name() { return "corruptions"; }

// One column per corruption and severity, named as above, with the raw predictions (records.csv's content).
EvalRecords corruption_records(const std::vector<int64_t>& index, const std::vector<int32_t>& label,
                               const std::vector<int32_t>& clean_pred, const std::vector<CorruptionRun>& runs);

// The columns `columns` of `r` stacked into one of N·columns.size() samples named `name` (index, label and clean
// prediction repeated per block).
EvalRecords pooled_records(const EvalRecords& r, const std::vector<std::string>& columns, const std::string& name);

nlohmann::json corruption_results_json(const RunInfo& info, const std::vector<int64_t>& index,
                                       const std::vector<int32_t>& label, const std::vector<int32_t>& clean_pred,
                                       const std::vector<CorruptionRun>& runs);

}  // namespace cw::eval
