#pragma once
// The per-epoch evaluation of docs/protocols/training.md §11: model.eval(), clean predictions and an untargeted PGD (default
// PGD-10, ε 8/255, α 2/255, one uniform start, CE) on a split, per class, counted as AutoAttack does (robust =
// clean-correct and not broken). The evaluator (eval/evaluator.h) does the work, so the numbers are exactly those
// `audit` would report for the same checkpoint, attack and seed.
#include <cstdint>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "eval/evaluator.h"
#include "eval/class_metrics.h"
#include "nn/module.h"

namespace cw::train {

struct SplitScores {
    fairness::ClassMetrics clean, robust;
};

// A named split for per-epoch evaluation ("val", "test").
struct EvalSplit {
    std::string name;
    eval::BatchSource data;
};

SplitScores evaluate_split(nn::Module& model, const EvalSplit& split, attacks::Attack& attack, int num_classes,
                           uint64_t seed);

// Selection rules for the best checkpoint (docs/protocols/training.md §3), scored on one split's per-epoch evaluation:
//   robust: overall robust accuracy (Rice et al.'s early stopping on PGD-10)
//   fair:   overall robust accuracy + worst-class robust accuracy (CFA's checkpoint rule)
enum class SelectRule { Robust, Fair };
const char* rule_name(SelectRule r);   // "robust" / "fair"
double selection_score(SelectRule r, const SplitScores& s);

}  // namespace cw::train
