#pragma once
// Benz et al. §3.2, "semantic features": is a class vulnerable because the model sees it as close to others? From
// one results.json (eval/results_json.h), for the clean evaluation and one attack:
//   - the confusion structure: the share of errors that stay inside the true class's superclass (CIFAR-100's 20)
//     against the share expected if errors fell on the other classes uniformly, the most-confused pairs of classes
//     and whether their confusion runs both ways (the paper expects x → y to come with y → x);
//   - the cross-class cosine similarity of the classes' mean logit vectors (eval/agreement.h, written by the
//     evaluator as cross_class_similarity): the most similar pairs, and within- against across-superclass means;
//   - the relation between a class's similarity to the others (mean_other, max_other) and its vulnerability (clean
//     and robust error, 1 − per-class accuracy): Spearman's ρ and Pearson's r over the classes.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/class_metrics.h"

namespace cw::protocols {

struct SuperclassShare {
    int64_t errors = 0, within = 0;   // off-diagonal samples; those predicted as another class of the true superclass
    double share = 0;                 // within / errors (NaN without errors)
    // Σ_k errors_k · (n_{s(k)} − 1)/(C − 1) / errors: the share if each class's errors were spread evenly over the
    // C − 1 other classes (4/99 on CIFAR-100's five classes per superclass).
    double chance = 0;
};
SuperclassShare superclass_share(const fairness::Confusion& m, const std::vector<int32_t>& coarse_of);

struct ConfusedPair {
    int a = -1, b = -1;              // a < b
    double rate_ab = 0, rate_ba = 0; // share of class a's samples predicted as b, and of b's predicted as a
};
// The `top` unordered pairs with the largest rate_ab + rate_ba (rates, not counts: classes may differ in size);
// ties by (a, b). Pairs confused in neither direction are left out.
std::vector<ConfusedPair> most_confused_pairs(const fairness::Confusion& m, size_t top);
// Σ_{a<b} 2·min(r_ab, r_ba) / Σ_{a≠b} r_ab: 1 when every confusion is matched by the same rate the other way, 0
// when all of it runs one way; NaN without errors.
double symmetric_share(const fairness::Confusion& m);

struct SimilarPair {
    int a = -1, b = -1;
    double cosine = 0;
};

struct EvaluationStructure {
    std::string eval;                                // "clean", "pgd20"
    std::vector<double> accuracy, error;             // per class
    std::vector<double> mean_other, max_other;       // per class (NaN where undefined)
    std::vector<ConfusedPair> confused;
    double symmetric = 0;
    std::optional<SuperclassShare> superclass;       // only with coarse_of in the results
    std::vector<SimilarPair> similar;                // the most similar pairs of classes
    double cosine_within = 0, cosine_across = 0;     // mean cosine of same-/different-superclass pairs (NaN: none)
};

struct Relation {
    std::string similarity, vulnerability;           // "clean mean_other", "robust error"
    double spearman = 0, pearson = 0;
    int classes = 0;                                 // classes where both are defined
};

struct SimilarityAnalysis {
    std::vector<std::string> classes;
    EvaluationStructure clean, attacked;
    std::vector<Relation> relations;
};

// `attack` names the evaluation under attack; throws naming `file` when it or the clean one is absent or an
// evaluation lacks cross_class_similarity.
SimilarityAnalysis analyse_similarity(const nlohmann::json& results, const std::string& attack, const std::string& file,
                                      size_t top = 5);

nlohmann::json similarity_json(const SimilarityAnalysis& s);
std::string similarity_markdown(const std::string& arm, const SimilarityAnalysis& s);

}  // namespace cw::protocols
