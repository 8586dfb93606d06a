#pragma once
// The per-sample evaluation records every reported metric is computed from (docs/protocols/metrics.md): the dataset index,
// label and clean prediction of each sample, and its prediction under each attack. Counting follows AutoAttack:
// robust = clean-correct and not broken. A clean-wrong sample's prediction under an attack is its clean prediction
// (AutoAttack leaves it at x), so robust under an attack is simply "prediction equals the label" here, in
// records.csv, results.json and the tables alike.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace cw::eval {

struct EvalRecords {
    std::vector<int64_t> index;                    // dataset index of each sample, in evaluation order
    std::vector<int32_t> label;
    std::vector<int32_t> clean_pred;
    std::vector<std::string> attacks;              // attack names, in evaluation order
    std::vector<std::vector<int32_t>> adv_pred;    // [attack][sample]: argmax f(x_adv) if clean-correct, else the
                                                   // clean prediction

    int64_t size() const { return static_cast<int64_t>(index.size()); }
    // Position of attack `name` in `attacks`; throws if absent.
    size_t attack_position(const std::string& name) const;
};

// Whether every entry is a class index in [lowest, num_classes) (lowest −1 admits "not computed yet"): a saved state's
// labels and predictions index the confusion matrices, so a resume checks them first.
bool class_indices_in_range(const std::vector<int32_t>& v, int32_t num_classes, int32_t lowest = 0);

// CSV: header "index,label,clean_pred,<attack>_pred,...", one row per sample.
std::string records_csv(const EvalRecords& r);
// Throws std::invalid_argument starting with `source` (the file) on a malformed table.
EvalRecords parse_records_csv(const std::string& text, const std::string& source = "records CSV");

}  // namespace cw::eval
