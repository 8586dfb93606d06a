#pragma once
// What a job checks before its first epoch, so that a typo or a mismatch is one line then rather than a surprise
// after hours of training: the final evaluation's checkpoint and attack names, and a --resume against the run it
// continues.
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "attacks/attack.h"

namespace cw::train {

// The job.json entries that shape training: dataset, model, method (its description, options included), eps,
// recipe, batch size, training images, training file, validation split, seed, averaging, --init, precision.
const std::vector<std::string>& training_keys();

// A --resume continues the run its folder holds: throws one line naming the first of `keys` whose value in `now`
// differs from the run's job.json (an entry absent from both is equal).
// The message starts with `flag` (--resume, or --summary when a study gathers finished runs).
void check_same_run(const std::string& job_file, const nlohmann::json& now,
                    const std::vector<std::string>& keys = training_keys(), const std::string& flag = "--resume");

// The names of --final-checkpoints (trainer.h's checkpoint_names); throws naming the flag on an unknown one or on an
// averaged (ema_) one without averaging (`ema` "off").
std::vector<std::string> final_checkpoint_list(const std::string& list, const std::string& ema);

// A note on `out` when averaged checkpoints are asked of a run whose averaging starts (0-based `ema_start`) after
// its last epoch: none will be written.
void note_late_averaging(const std::vector<std::string>& checkpoints, int64_t ema_start, int64_t epochs,
                         std::ostream& out);

// FAAL (faal, faal_trades) fine-tunes a trained robust model: without --init it would quietly train from random
// weights. Throws one line naming --init unless `from_scratch` (--faal-from-scratch) asks for exactly that.
void check_fine_tune_start(const std::string& method, const std::string& init, bool from_scratch);

// The attacks of --final-attacks at `eps` (step eps/4), each logging to `log`; "clean" is skipped. Throws naming
// the flag on an unknown name or a step count outside [1, 10^6].
struct FinalAttacks {
    std::vector<std::unique_ptr<attacks::Attack>> owned;
    std::vector<attacks::Attack*> list;
};
FinalAttacks final_attacks(const std::string& names, float eps, std::ostream& log);

}  // namespace cw::train
