#pragma once
// The summary of a study whose arms are training runs compared side by side: summary.md (the table of
// report/comparison.h; with --seeds the mean ± sample std over seeds per arm, then each seed's table) and
// compare.html with its figures, over whichever training jobs have finished (work jobs, study/work.h, are not
// compared).
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "cli/common_flags.h"
#include "study/jobs.h"

namespace cw::study {

struct Study;

// Returns 0; -1 when no training job has finished (nothing written); 130 / 143 when a signal stopped it.
int write_comparison_summary(const Study& study, const std::vector<StudyJob>& jobs, bool seeded,
                             const cli::CommonFlags& common, std::ostream& out,
                             std::chrono::steady_clock::time_point t0);

// Says which signal stopped the study and when (every finished job is saved); returns the exit code for it.
int stopped(std::ostream& out, const std::string& when);

}  // namespace cw::study
