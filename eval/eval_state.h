#pragma once
// The evaluator's resumable state (evaluator.h): what has been done (a step count) and every record so far.
// Stored as JSON in out_dir/eval_state.json, replaced atomically after every step.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/eval_records.h"

namespace cw::eval {

struct EvalState {
    nlohmann::json fingerprint;                    // attack configs, seed, batch count: a resume must match it
    int64_t steps_done = 0;
    std::vector<int64_t> batch_offsets;            // first sample of each batch seen by the clean pass
    EvalRecords records;                           // adv_pred[a][i] = −1 until computed
    std::vector<std::vector<int32_t>> broken_by;   // [attack][sample]: ensemble stage that broke it, −1 none
                                                   // (empty vector for plain attacks)
    std::vector<double> time_s;                    // [attack] seconds spent, summed over sessions
    std::vector<int64_t> sanity_violations;        // [attack]
    // [evaluation][c·C + j] (0 clean, then the attacks): Σ logit j over the samples of true class c seen so far
    // (eval/class_logits.h); an empty entry for an ensemble. Empty altogether for a state written before the sums
    // were kept ("logit_sums" absent): such a run goes on without them, and reports no mean logits.
    std::vector<std::vector<double>> logit_sums;
};

nlohmann::json state_to_json(const EvalState& s);
// Throws std::runtime_error on a malformed state: a field missing or of the wrong type, or records whose lengths do
// not fit together (one per sample, one list per attack); the evaluator checks the rest against its run.
EvalState state_from_json(const nlohmann::json& j);

}  // namespace cw::eval
