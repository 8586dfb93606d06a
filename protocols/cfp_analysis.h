#pragma once
// FAIR-TAT §4's question: which classes absorb the errors? CFP_k (fairness.md §A, results.json "cfp") is the share
// of all misclassified samples that were predicted as class k — under an attack, the share of the attack's wrong
// predictions. Per model: the CFP vector of every evaluation, the three classes with the largest CFP under each
// attack, and whether the attacks agree on that ranking (Spearman's ρ of the CFP vectors, fairness/agreement.h).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cw::protocols {

struct ModelCfp {
    std::string model;
    std::vector<std::string> classes;
    std::vector<std::string> evaluations;     // "clean", then the attacks in results.json order
    std::vector<std::vector<double>> cfp;     // per evaluation, one value per class
    std::vector<double> accuracy;             // per evaluation
};

// From a results.json (checked by the caller, e.g. report::load_results_json).
ModelCfp model_cfp(const std::string& model, const nlohmann::json& results);

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
CfpAgreement cfp_agreement(const ModelCfp& model);

// Per model: a row per evaluation with its accuracy, the top 3 absorbing classes ("cat 31.2%") and ρ against the
// first attack; then the agreement line. Markdown.
std::string cfp_markdown(const std::vector<ModelCfp>& models);
// model,evaluation,class,cfp — every value, for plots.
std::string cfp_csv(const std::vector<ModelCfp>& models);

}  // namespace cw::protocols
