#pragma once
// The end of a training job: each checkpoint it names (last, best_robust, ema_last, ...) evaluated class by class on
// the test images, clean and under the final attacks, into eval_<checkpoint>/ (and, with common corruptions,
// eval_<checkpoint>_corruptions/). Two names for one epoch's weights are evaluated once and the files copied; a
// checkpoint the run did not write is skipped with a line saying what it needs. Resumable, and stopped by a
// signal like training (eval::EvalInterrupted).
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "engine/device.h"
#include "jobs/job_checks.h"
#include "jobs/job_data.h"
#include "nn/module.h"

namespace cw::train {

struct JobConfig;

// What a job resolved from its final-evaluation flags before training (so typos fail then, not after it).
struct FinalEvaluationPlan {
    std::vector<std::string> checkpoints;   // --final-checkpoints
    const FinalAttacks* attacks = nullptr;  // --final-attacks
    std::vector<std::string> corruptions;   // --final-corruptions; empty: none
    std::vector<int> severities;            // --corruption-severities
};

// Evaluates `plan`'s checkpoints from `job`'s run folder on `images`' test images; `new_model` builds the job's
// architecture. Logs each step to `out`.
void evaluate_final_checkpoints(const JobConfig& job, const FinalEvaluationPlan& plan, const JobImages& images,
                                const std::function<std::shared_ptr<nn::Module>()>& new_model, Device device,
                                std::ostream& out);

}  // namespace cw::train
