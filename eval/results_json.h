#pragma once
// results.json (/work/shared/spec/results_json.md): built from the per-sample records only, so every number in it
// can be recomputed from records.csv. Contract fields per evaluation: name, [attack], accuracy, per_class_accuracy,
// [per_class_boundary_error], worst_class, best_class, confusion, cfp. Extra fields (allowed by the contract):
// class_counts, worst10_accuracy, accuracy_spread, accuracy_sd, cfn, per_class_boundary_error_exact, stages
// (robust accuracy after each part of an ensemble), time_s, sanity_violations.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "eval/eval_records.h"

namespace cw::eval {

struct RunInfo {
    std::string experiment = "audit", dataset, split, arch, checkpoint, method, device;
    uint64_t seed = 0;
    std::vector<std::string> classes;   // class names, label order (defines the class count)
};

struct AttackSummary {
    std::string name;
    nlohmann::json config;                                   // the results.json "attack" object
    double time_s = 0;
    int64_t sanity_violations = 0;
    std::vector<std::pair<std::string, double>> stages;      // ensembles: robust accuracy after each part
};

nlohmann::json results_json(const RunInfo& info, const EvalRecords& records, const std::vector<AttackSummary>& attacks);

// Names of every top-level and per-evaluation field the contract requires (the tests check them).
const std::vector<std::string>& results_required_fields();
const std::vector<std::string>& evaluation_required_fields(bool attack);

}  // namespace cw::eval
