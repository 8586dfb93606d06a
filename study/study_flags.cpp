#include "study/study_flags.h"

#include "util/flags.h"

namespace cw::study {

void add_study_flags(cli::FlagSet& app, StudyFlags& flags) {
    app.flag("--yes", flags.yes, "on a CPU, train even when the estimate exceeds --ask-above (no question asked)");
    app.option("--ask-above", flags.ask_above_s,
               "seconds: on a CPU, a run (not --quick) whose estimated training time exceeds this asks first "
               "(from a terminal) or needs --yes")
        .range(0.0, 1e12)
        .show_default();
    app.option("--seeds", flags.seeds, "comma-separated: every arm once per seed, in <out>/<arm>/seed<k>/ "
                                           "(trained with --seed + k); the summary gives mean and std over seeds");
    app.flag("--list-jobs", flags.list_jobs, "print the job ids (arm or arm/seed<k>), dependencies first, and exit");
    app.option("--level", flags.level, "with --list-jobs: only the jobs of this dependency level (0: those that "
                                           "need nothing; empty output past the last level)")
        .range(0, 1000000);
    app.option("--job", flags.job, "run one job (an id or index from --list-jobs) and exit; resumable, and "
                                       "locked so two processes never run it at once");
    app.flag("--summary", flags.summary, "gather the finished jobs into the summary; list missing and failed ones");
    app.flag("--slurm", flags.slurm, "write sbatch scripts for every job into <out>/slurm/ and print how to submit");
    app.option("--slurm-gpus", flags.slurm_options.gpus, "GPUs per Slurm job (--gres=gpu:N; 0: none)")
        .range(0, 64).show_default();
    app.option("--slurm-cpus", flags.slurm_options.cpus, "CPUs per Slurm job (--cpus-per-task)")
        .range(1, 1024).show_default();
    app.option("--slurm-time", flags.slurm_options.time, "time limit of every Slurm job (--time)")
        .show_default();
    app.option("--slurm-partition", flags.slurm_options.partition, "Slurm partition (default: the cluster's)");
}

void add_experiment_flags(cli::FlagSet& app, train::JobConfig& base, const cli::CommonSpec& spec, StudyFlags& study,
                          const std::vector<std::string>& shown) {
    cli::add_common_flags(app, base.common, spec);
    add_study_flags(app, study);
    train::add_job_flags(app, base);
    for (const std::string& flag : shown) app.get(flag).show_default();
}

}  // namespace cw::study
