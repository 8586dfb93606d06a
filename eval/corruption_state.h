#pragma once
// The resumable state of a corruption evaluation (eval/corruption_eval.h): the clean pass and every finished
// corruption with its predictions, in out_dir/corruption_state.json, replaced atomically (util/atomic_file.h) after
// the clean pass and after each corruption — the unit of work, since one corruption is a pass per severity.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/corruption_results.h"

namespace cw::eval {

struct CorruptionState {
    nlohmann::json fingerprint;          // what a resumed run must match (severities, seeds, samples, classes, run key)
    std::vector<int64_t> index;
    std::vector<int32_t> label, clean_pred;
    std::vector<CorruptionRun> done;     // in the order finished

    const CorruptionRun* find(const std::string& name) const;
};

nlohmann::json corruption_state_to_json(const CorruptionState& s);
// Throws std::runtime_error naming `file` on a malformed state.
CorruptionState corruption_state_from_json(const nlohmann::json& j, const std::string& file);

}  // namespace cw::eval
