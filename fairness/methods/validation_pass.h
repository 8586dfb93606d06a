#pragma once
// What FRL and WAT need from the validation split at an epoch boundary.
#include <string>

#include "train/epoch_eval.h"
#include "train/method.h"

namespace cw::train {

// The split, or a one-line error naming --val-split and the method.
const EvalSplit& require_validation(const Validation& v, const std::string& method);

// The class count, from the model's output width on the split's first batch (eval mode, no gradient): the epoch
// hooks are not told C.
int output_classes(nn::Module& model, const EvalSplit& split);

// FRL's validation pass as its code counts (utils_frl*.py `evaluate`): per class the clean accuracy and the
// accuracy at the attack's point, where a sample correct there counts as robust whatever its clean prediction. The
// evaluator's AutoAttack rule (robust = clean-correct and not broken, evaluate_split) stays for every reported
// number; this is only what FRL's multipliers are driven by. The attack draws from Rng(seed), batch after batch.
SplitScores any_correct_scores(nn::Module& model, const EvalSplit& split, attacks::Attack& attack, int num_classes,
                               uint64_t seed);

// A per-epoch attack seed: the run's seed mixed with the epoch, so every epoch's evaluation draws fresh starts
// and a resumed run draws the same ones.
uint64_t epoch_seed(uint64_t seed, int64_t epoch);

}  // namespace cw::train
