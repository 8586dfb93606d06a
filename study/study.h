#pragma once
// A study: several training runs ("arms", one per method or setting) on the same data, each a whole job
// (jobs/job.h) in its own folder, then compared class by class. The experiment binaries are studies whose arms
// follow a paper's protocol; the study gives them the rest once: running the arms in order, --resume (a finished
// arm is skipped, a half-done one continues), the comparison page and the Markdown table.
//
//   <out>/<arm>/...            every arm's files (jobs/job.h), its report.html included
//   <out>/compare.html         the arms side by side (report/compare_page.h), figures in <out>/figures/
//   <out>/summary.md           the table printed at the end (report/comparison.h), with the study's title
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/common_flags.h"
#include "jobs/job.h"
#include "study/confirm.h"
#include "study/jobs.h"
#include "study/study_flags.h"
#include "study/work.h"

namespace cw::study {

struct Arm {
    std::string name;         // folder and column name
    train::JobConfig job;     // the arm's job; its common flags (out, resume, seed, device, data dir) come from the study
    bool averaged = false;    // weight averaging (EMA, FAWA): the arm is compared by its averaged model ("ema_<checkpoint>")
    // Starts from another arm's checkpoint of the same seed (FRL fine-tunes PGD-AT's best): that arm's name and the
    // checkpoint file in its folder. The arm then needs that one finished first (study/jobs.h).
    std::string init_arm, init_file;
    std::vector<std::string> needs;   // other arms that must finish first (init_arm is added by the study)
    // Points the job at files of the jobs it needs (benz_features trains on a construction job's output): called
    // for every job of the arm with each needed arm's folder of the same seed, by arm name.
    std::function<void(train::JobConfig&, const std::map<std::string, std::string>& inputs)> use_inputs;
    // Set: the arm is not a training run but other work (study/work.h); `job` is not used.
    Work work;
    bool is_work() const { return static_cast<bool>(work.run); }
};

struct Study {
    std::string title;
    std::vector<Arm> arms;
    std::string checkpoint = "last";   // the evaluation compared (the papers report the last epoch)
    std::string attack;                // the robust column; empty: the first attack all arms share
    // The study's own summary instead of the training arms side by side (the grid's rankings, the Gaussian
    // example's theory tables): called with the finished jobs after a full run and by --summary, also when some
    // have not finished. Returns 0, or 130 / 143 when a signal stopped it.
    std::function<int(const std::vector<StudyJob>& finished, std::ostream& out)> summary;
    // A full run goes on past a job that fails (the grid: a cell whose data is not on this machine), skips the
    // jobs that need it, summarises the rest and exits 1 naming them; otherwise the first failure ends the run.
    bool keep_going = false;
};

// The arms' job template: every arm starts as a copy of `base` with its method (and name) set.
Arm arm(const std::string& name, const train::JobConfig& base, const std::string& method);

// A comma-separated list of methods: one arm each, named after the method. Throws naming `flag` on an unknown
// method or a repeated one.
std::vector<Arm> arms_for_methods(const std::string& flag, const std::string& methods, const train::JobConfig& base);

// Replaces the job flag --method by --methods (the list arms_for_methods reads), for the binaries whose arms are
// methods.
void add_methods_flag(cli::FlagSet& app, std::string& methods);

// "cifar10, resnet18": the data and the model the arms share (the dataset's default model when --arch is not
// given), the start of the binaries' study titles.
std::string data_and_model(const train::JobConfig& base);

// True when the arm's every final evaluation has its results.json, or was skipped because the run never wrote that
// checkpoint (a --resume skips a finished arm); for a work arm, when its work says so.
bool arm_finished(const Arm& arm, const std::string& arm_dir);

// Runs one arm into `dir` with the study's common flags (the arm keeps its own epochs, and its own seed when
// `own_seed`: a job of --seeds trains with --seed + k). With common.resume a finished arm is skipped (returns 0, says so) and a
// half-done one continues. Returns run_job's code.
int run_arm(const Arm& arm, const cli::CommonFlags& common, const std::string& dir, std::ostream& out,
            bool own_seed = false);

// On a CPU a paper-scale study can take days: time a few optimiser steps of the first adversarial arm on this
// machine and extrapolate to every arm's training (natural arms cost 1/(K+1) of it; evaluations and work arms come
// on top).
// Returns the estimate in seconds (0 when nothing could be timed, or a signal stopped the probe); prints it.
double estimate_training_seconds(const Study& study, const cli::CommonFlags& common, std::ostream& out);

// Runs the study: each arm into <common.out>/<arm.name>/ with the study's common flags, then the comparison. On a
// CPU it first asks whether to train at all (study/confirm.h: the estimate, the ways forward, --yes).
// Returns 0; kNotConfirmedExit when it did not start; 130 / 143 when a SIGINT / SIGTERM stopped any phase (the
// probe, an arm's training or final evaluation, the summary) with its state saved: rerun with --resume; 1 when
// jobs of a keep_going study failed.
// The cluster flags (study/study_flags.h): --list-jobs, --job and --slurm do their part and end the program
// (cli::ExitRequest: the binary's analysis after the arms does not run); --summary returns 0 when every job has
// finished (the analysis follows) and ends the program with kIncompleteExit when some have not.
int run_study(const Study& study, const cli::CommonFlags& common, std::ostream& out, const StudyFlags& flags = {});

constexpr int kIncompleteExit = 3;   // --summary: some jobs have not finished (they are listed)

}  // namespace cw::study
