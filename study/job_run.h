#pragma once
// One job of a study (study/jobs.h), as a full run, --job and a Slurm array task all run it: its arm made concrete
// (the seed of --seeds, the files of the jobs it needs), the refusal while those are unfinished, and the run itself
// under the job's lock (study/job_lock.h), a training run or other work (study/work.h), its error kept in
// <job dir>/job_error.txt for --summary.
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/common_flags.h"
#include "study/jobs.h"

namespace cw::study {

struct Arm;
struct Study;

// The folders of the jobs `job` needs, by arm name (the same seed's).
std::map<std::string, std::string> input_dirs(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs);

// The job's arm: named by the job's id, its seed (--seed + k with --seeds), the checkpoint it starts from and the
// files it reads (Arm::use_inputs) in the folders of the jobs it needs.
Arm job_arm(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs, const cli::CommonFlags& common);

// Throws "job <id> needs <a>, <b> finished first (not finished yet)" when some of the jobs it needs are unfinished.
void require_inputs(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs);

// Keeps a job's one-line error in <dir>/job_error.txt (--summary lists it as failed).
void record_failure(const std::string& dir, const std::string& what);

// Runs the job under its lock; with common.resume a finished job is skipped and a started one continues. Returns
// 0, or 130 / 143 when a signal stopped it (its state saved); throws on failure, the error recorded.
int run_one(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs, const cli::CommonFlags& common,
            std::ostream& out);

}  // namespace cw::study
