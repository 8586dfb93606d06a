#pragma once
// --slurm: a ready set of sbatch scripts for a study's jobs (study/jobs.h), written to <out>/slurm/:
//   level<L>.jobs        the job ids of dependency level L, one a line (array task i runs line i+1)
//   level<L>.sbatch      a job array over them: `<binary> <the same flags> --job <id>`
//   summary.sbatch       `<binary> <the same flags> --summary` once every level has ended (afterany)
//   submit.sh            submits the levels in order, each `--dependency=afterok` on the one before (and
//                        `--kill-on-invalid-dep=yes`: a failed job cancels the levels after it, so they end and the
//                        summary runs), then the summary `--dependency=afterany` on every level
// Every script asks Slurm for SIGTERM before the time limit (#SBATCH --signal=B:TERM@<s>): the job saves its
// state and exits 143; --requeue lets a preempted job start again, and a job started again continues from its
// state. Resources come from the --slurm-* flags.
#include <string>
#include <vector>

namespace cw::study {

struct StudyJob;

struct SlurmOptions {
    int gpus = 1;                  // --gres=gpu:N per job (0: none)
    int cpus = 4;                  // --cpus-per-task
    std::string time = "24:00:00"; // --time of every job
    std::string partition;         // --partition (empty: the cluster's default)
    int signal_seconds = 120;      // SIGTERM this long before the time limit
};

// Throws one line naming --slurm-time or --slurm-partition when a value would make a script sbatch refuses (or
// one with lines of its own). write_slurm_scripts checks first.
void check_slurm_options(const SlurmOptions& o);

// The command that runs this binary again: its absolute path and argv[1..] from /proc/self/cmdline, without the
// flags that pick a mode (--slurm*, --list-jobs, --summary, --job). Shell-quoted.
std::string rerun_command(const std::vector<std::string>& argv);

// Writes the scripts into `dir` and returns the submit command ("sh <dir>/submit.sh").
std::string write_slurm_scripts(const std::vector<StudyJob>& jobs, const std::string& dir, const std::string& title,
                                const SlurmOptions& options, const std::string& command, const std::string& workdir);

// argv of this process (Linux: /proc/self/cmdline).
std::vector<std::string> own_argv();

}  // namespace cw::study
