#pragma once
// A study's units of work for a cluster: one job per arm (per arm and seed with --seeds 0,1,2), each a whole
// resumable training run — or other work, study/work.h — in its own folder, with the jobs it needs finished first
// (FRL fine-tunes PGD-AT's checkpoint of the same seed; benz_features trains on the feature set a construction job
// built from a source model's job). --list-jobs prints them level by level (a job's level is one more than the
// highest level of what it needs), so running the levels in order — GNU parallel per level, a Slurm array per level
// with afterok between them (study/slurm.h) — always finds a job's inputs.
//
//   <out>/<arm>/              a job without --seeds (the folder a study always used)
//   <out>/<arm>/seed<k>/      with --seeds: the arm trained with --seed + k
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/common_flags.h"

namespace cw::study {

struct Study;

struct StudyJob {
    int index = 0;                     // position in list order (a Slurm array index maps to it through the lists)
    std::string id;                    // "<arm>" or "<arm>/seed<k>"
    size_t arm = 0;                    // into Study::arms
    std::optional<uint64_t> seed;      // the k of --seeds; none without --seeds
    std::string dir;
    std::vector<std::string> needs;    // ids of the jobs that must be finished first
    int level = 0;
};

// "0,1,2" → {0, 1, 2}; throws naming --seeds on a bad or repeated value. Empty: no seeds (one job per arm).
std::vector<uint64_t> parse_seeds(const std::string& text);

// Every job, in list order: by level, then seed, then the study's arm order. Throws when an arm needs an arm the
// study does not have, or the needs form a cycle.
std::vector<StudyJob> study_jobs(const Study& study, const std::string& out, const std::vector<uint64_t>& seeds);

// A job by index ("3") or id ("pgd_at/seed1"); throws naming --job and listing the valid ids.
const StudyJob& find_job(const std::vector<StudyJob>& jobs, const std::string& id);

enum class JobState { Finished, Failed, Running, Started, Missing };
const char* job_state_name(JobState s);

// Finished: every final evaluation written (work, study/work.h: its own test); Failed: <dir>/job_error.txt (the
// one-line error of its last try); Running: a live process holds its lock (study/job_lock.h); Started: files but
// none of those; Missing: nothing.
JobState job_state(const Study& study, const StudyJob& job);

}  // namespace cw::study
