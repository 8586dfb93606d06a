#pragma once
// Evaluation of a model on a dataset split under a list of attacks, with per-sample records (eval_records.h) from
// which every metric is computed (results_json.h), AutoAttack-style progress lines, a final per-class table, and
// resumable state.
//
//   BatchSource data = batches_from(std::move(batches));      // or a callback into the data loader
//   EvalOptions opt;  opt.out_dir = "runs/audit";  opt.info.classes = names;  opt.resume = true;
//   EvalOutcome out = evaluate(model, data, {pgd20.get(), aa.get()}, opt);
//
// Order of work (each item one "step"): the clean pass over all batches, then for each attack its stages (one for
// a plain attack, one per part for an ensemble such as AutoAttack) over all batches — stage-major, as AutoAttack
// runs. After every step the state (records so far and the step count) is written atomically to
// out_dir/eval_state.json; with `resume` a run continues after the last saved step. Each step draws its randomness
// from an Rng seeded by (seed, attack name, batch), so a resumed run gives exactly the results of an
// uninterrupted one, and an attack's numbers do not depend on which other attacks are in the list. (AutoAttack
// re-seeds every batch with the same seed; we mix in the batch index so batches do not share random starts. All
// parts of an ensemble still get the same seed on a batch, as in AutoAttack.)
// Plain attacks attack every sample; ensembles only the clean-correct ones (§8).
// The same forward pass that gives the clean (or, for a plain attack, the adversarial) predictions also adds the
// logits to per-class sums kept in the state, for results.json's per_class_mean_logits (results_json.h).
#include <cstdint>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "eval/eval_records.h"
#include "eval/results_json.h"

namespace cw::eval {

// A minimal batch so the evaluator does not depend on the datasets module (data::Batch has the same fields).
struct EvalBatch {
    Tensor images;                 // float32 [B, C, H, W] in [0, 1], on the model's device
    Tensor labels;                 // int32 [B]
    std::vector<int64_t> indices;  // dataset index of each row
};

// Random access to the batches of a split; the evaluator asks for each batch once per step that needs it, so
// the callback must return the same batch for the same b every time.
struct BatchSource {
    int64_t num_batches = 0;
    std::function<EvalBatch(int64_t b)> batch;
};
BatchSource batches_from(std::vector<EvalBatch> batches);

struct EvalOptions {
    RunInfo info;                  // results.json header; info.classes defines the class count, info.seed the seed
    std::string out_dir;           // results.json, records.csv, eval_state.json; empty: write nothing
    bool resume = false;           // continue from out_dir/eval_state.json if it exists
    std::ostream* log = nullptr;   // progress lines; nullptr: silent
    int64_t stop_after_steps = -1; // tests: throw EvalInterrupted after this many steps of this call
    // Asked after every saved step: true stops the run there (EvalInterrupted; the state is saved, --resume
    // continues). The job passes "a SIGINT / SIGTERM arrived" (train/stop_signal.h). Empty: never.
    std::function<bool()> should_stop;
    // What else identifies the run for --resume (dataset, split, checkpoint, n, batch size ...): a saved state
    // is only continued if this, the attack configs, the seed and the batch count all match.
    nlohmann::json run_key = nlohmann::json::object();
};

struct EvalInterrupted : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct EvalOutcome {
    EvalRecords records;
    std::vector<AttackSummary> attacks;
    nlohmann::json results;        // what results.json holds
};

EvalOutcome evaluate(nn::Module& model, const BatchSource& data, const std::vector<attacks::Attack*>& attacks,
                     const EvalOptions& options);

}  // namespace cw::eval
