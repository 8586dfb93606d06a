#pragma once
// A second attack radius for a finished training job. Xu et al. evaluate every model under PGD at 8/255 and at
// 4/255; a job's final attacks all share the job's ε (an attack name such as pgd20 cannot carry its own radius), so
// the second radius is a second pass over the job's evaluated checkpoints with eval::evaluate, on the same test
// images: <job out>/eval_<checkpoint>_eps<R>/results.json, R = the radius in 1/255 units (eval_last_eps4).
#include <ostream>
#include <string>
#include <vector>

#include "jobs/job.h"

namespace cw::protocols {

// "eval_last_eps4" for (last, 4/255).
std::string second_radius_folder(const std::string& checkpoint, float eps);

// Evaluates each of the job's final checkpoints that exists under `attacks` at `eps` (step eps/4, as the job's own
// final attacks); with job.common.resume, a checkpoint whose results.json exists is skipped, one begun resumes.
// Returns the folders written or found. Ctrl-C or SIGTERM stops it after the step in progress with the state saved
// (eval::EvalInterrupted; cli::run_guarded turns it into the line and exit code of a stopped run).
std::vector<std::string> evaluate_second_radius(const train::JobConfig& job, float eps,
                                                const std::vector<std::string>& attacks, std::ostream& log);

}  // namespace cw::protocols
