#include "train/epoch_eval.h"

namespace cw::train {

SplitScores evaluate_split(nn::Module& model, const EvalSplit& split, attacks::Attack& attack, int num_classes,
                           uint64_t seed) {
    eval::EvalOptions opt;
    opt.info.seed = seed;
    opt.info.split = split.name;
    opt.info.classes.resize(static_cast<size_t>(num_classes));
    for (int k = 0; k < num_classes; ++k) opt.info.classes[static_cast<size_t>(k)] = std::to_string(k);
    const eval::EvalOutcome out = eval::evaluate(model, split.data, {&attack}, opt);
    SplitScores s;
    s.clean = fairness::class_metrics(out.records.label, out.records.clean_pred, num_classes);
    s.robust = fairness::class_metrics(out.records.label, out.records.adv_pred.at(0), num_classes);
    return s;
}

const char* rule_name(SelectRule r) { return r == SelectRule::Robust ? "robust" : "fair"; }

double selection_score(SelectRule r, const SplitScores& s) {
    const double overall = s.robust.accuracy;
    if (r == SelectRule::Robust) return overall;
    const double worst = s.robust.worst_class >= 0 ? s.robust.per_class_accuracy[static_cast<size_t>(s.robust.worst_class)] : 0.0;
    return overall + worst;
}

}  // namespace cw::train
