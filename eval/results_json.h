#pragma once
// results.json (docs/results_json.md): built from the per-sample records only, so every number in it
// can be recomputed from records.csv. Contract fields per evaluation: name, [attack], accuracy, per_class_accuracy,
// [per_class_boundary_error], worst_class, best_class, confusion, cfp. Extra fields (allowed by the contract):
// class_counts, worst10_accuracy, accuracy_spread, accuracy_sd, cfn, per_class_boundary_error_exact, stages
// (robust accuracy after each part of an ensemble), time_s, sanity_violations.
//
// Two extras do not come from the records:
// - per_class_mean_logits (C×C, row c = μ_c, the mean logit vector over the samples of true class c — at the clean
//   input for "clean", at the attack's returned point for a plain attack, every sample of the class; null for a
//   class without samples) and cross_class_similarity {matrix: cosine similarities of the μ_c, mean_other: s_c,
//   max_other} (eval/agreement.h). They come from the evaluator's logit sums; an ensemble (AutoAttack) has
//   none — it returns no single point per sample, only the stage that broke it — and neither has a run resumed
//   from a state written before the sums were kept.
// - With superclasses (RunInfo::coarse_classes, e.g. CIFAR-100's 20): top-level coarse_classes and coarse_of
//   (each class's superclass index), and superclass_confusion per evaluation (fine confusion summed by superclass).
// - command_line (top level, when RunInfo has it): how the run was started, for the report page.
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
    std::vector<std::string> coarse_classes;   // superclass names; empty: no superclass fields
    std::vector<int32_t> coarse_of;            // [class]: its superclass's index in coarse_classes
    std::string command_line;                  // how the run was started (extra field "command_line"; empty: left out)
};

struct AttackSummary {
    std::string name;
    nlohmann::json config;                                   // the results.json "attack" object
    double time_s = 0;
    int64_t sanity_violations = 0;
    std::vector<std::pair<std::string, double>> stages;      // ensembles: robust accuracy after each part
};

// logit_sums[e][c·C + j]: the sum of logit j over the samples of true class c in evaluation e (0 clean, then the
// attacks in order; eval/class_logits.h). Empty: no mean logits at all; an empty entry: none for that evaluation.
nlohmann::json results_json(const RunInfo& info, const EvalRecords& records, const std::vector<AttackSummary>& attacks,
                            const std::vector<std::vector<double>>& logit_sums = {});

// Names of every top-level and per-evaluation field the contract requires (the tests check them).
const std::vector<std::string>& results_required_fields();
const std::vector<std::string>& evaluation_required_fields(bool attack);

}  // namespace cw::eval
