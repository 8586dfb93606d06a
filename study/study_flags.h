#pragma once
// The flags every experiment binary gets from the study, beside the common ones (cli/common_flags.h) and the job's:
//   --yes              train at paper scale on a CPU without asking (study/confirm.h)
//   --ask-above S      ask first when the CPU estimate exceeds S seconds (default 3600)
// and the cluster flags (study/jobs.h, study/slurm.h, docs/cluster.md):
//   --seeds 0,1,2      arm × seed is the unit of work, each in <out>/<arm>/seed<k>/; the summary has mean ± std
//   --list-jobs        the job ids, one a line, level by level      --job ID   run one job (resumable, locked)
//   --level L          with --list-jobs: only level L (GNU parallel runs one level after another)
//   --summary          gather what has finished; list what is missing or failed
//   --slurm            write sbatch scripts to <out>/slurm/ (--slurm-gpus, --slurm-cpus, --slurm-time,
//                      --slurm-partition) and print the command that submits them
#include <string>
#include <vector>

#include "cli/common_flags.h"
#include "jobs/job.h"
#include "study/slurm.h"

namespace cw::cli {
class FlagSet;
}

namespace cw::study {

struct StudyFlags {
    bool yes = false;
    double ask_above_s = 3600;
    std::string seeds;
    bool list_jobs = false;
    int level = -1;   // --level L: --list-jobs lists only that dependency level
    std::string job;
    bool summary = false;
    bool slurm = false;
    SlurmOptions slurm_options;
};

void add_study_flags(cli::FlagSet& app, StudyFlags& flags);

// Every flag of an experiment binary but its own: the common ones (`spec`), the study's, and every job flag of the
// base job its arms are made of. `shown`: job flags whose defaults are the paper's setting for the dataset (the
// architecture, the radius), shown by --help and --print-config.
void add_experiment_flags(cli::FlagSet& app, train::JobConfig& base, const cli::CommonSpec& spec, StudyFlags& study,
                          const std::vector<std::string>& shown);

}  // namespace cw::study
