#pragma once
// FAIR-TAT §4's question: which classes absorb the errors? CFP_k (docs/protocols/metrics.md, results.json "cfp") is the share
// of all misclassified samples that were predicted as class k — under an attack, the share of the attack's wrong
// predictions. Per model: the CFP vector of every evaluation, the three classes with the largest CFP under each
// attack, and whether the attacks agree on that ranking (Spearman's ρ of the CFP vectors, eval/agreement.h).
//
// results.json's CFP under an attack counts every wrong prediction — the clean errors too, which every attack
// keeps (a clean-wrong sample is not attacked). Where the clean errors dominate, every attack shows nearly the
// clean CFP and the attacks agree by construction. So we also read records.csv and take the CFP over the samples
// the attack itself broke (clean-correct, wrong under the attack): where each attack sends them.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/eval_records.h"

namespace cw::protocols {

struct ModelCfp {
    std::string model;
    std::vector<std::string> classes;
    std::vector<std::string> evaluations;     // "clean", then the attacks in results.json order
    std::vector<std::vector<double>> cfp;     // per evaluation, one value per class
    std::vector<double> accuracy;             // per evaluation
    // Per evaluation: the CFP over the samples the attack broke, and how many it broke (empty / 0 for clean, and
    // for every evaluation when no records were given).
    std::vector<std::vector<double>> broken_cfp;
    std::vector<int64_t> broken;
};

// From a results.json (checked by the caller, e.g. report::load_results_json) and, if given, the records of the
// same evaluation (records.csv beside it) for the CFP of the broken samples.
ModelCfp model_cfp(const std::string& model, const nlohmann::json& results, const eval::EvalRecords* records = nullptr);
// The share of the samples an attack broke (clean-correct, wrong under it) predicted as each class; all 0 when it
// broke none. `attack` is a position in records.attacks.
std::vector<double> broken_cfp(const eval::EvalRecords& records, size_t attack, int num_classes, int64_t* broken = nullptr);

// The k classes with the largest scores, largest first (lowest index on ties); classes with a score of 0 or NaN
// are left out, so a model without errors has no absorbing class.
std::vector<int> top_classes(const std::vector<double>& scores, int k);

struct CfpAgreement {
    std::vector<std::string> attacks;          // the attack evaluations compared (clean is not an attack)
    std::vector<std::vector<double>> spearman; // pairwise ρ of their CFP vectors (NaN where undefined)
    double mean_spearman = 0, min_spearman = 0;   // over the pairs; NaN with fewer than two attacks
    bool same_top1 = false;                    // one class has the largest CFP under every attack
    int top3_common = 0;                       // classes in the top 3 of every attack
};
// Over results.json's CFP (all errors), or with `broken` over the CFP of the samples each attack broke.
CfpAgreement cfp_agreement(const ModelCfp& model, bool broken = false);

// Per model: a row per evaluation with its accuracy, the top 3 absorbing classes ("cat 31.2%") and ρ against the
// first attack; then the agreement line; then the same for the samples each attack broke (when records were
// read). Markdown.
std::string cfp_markdown(const std::vector<ModelCfp>& models);
// model,evaluation,class,cfp,cfp_broken — every value, for plots (cfp_broken empty without records and for clean).
std::string cfp_csv(const std::vector<ModelCfp>& models);

}  // namespace cw::protocols
