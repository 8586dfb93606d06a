#pragma once
// A whole training job from flags: the data and its splits, the model, the method, the trainer, and the final
// per-class evaluation of the chosen checkpoints. `train` (tools/train.cpp), `quickstart` and the experiment
// binaries are this plus their defaults; an experiment that follows a paper's protocol sets the fields in code.
//
// Output folder: the trainer's files (train/trainer.h) plus, for every checkpoint in `final_checkpoints`,
// eval_<checkpoint>/results.json and records.csv (eval/evaluator.h), with --final-corruptions also
// eval_<checkpoint>_corruptions/ (eval/corruption_eval.h), and job.json (the resolved configuration).
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/common_flags.h"
#include "datasets/dataset.h"
#include "jobs/job_data.h"
#include "jobs/registry.h"
#include "train/trainer.h"

namespace cw::cli {
class FlagSet;
}

namespace cw::train {

struct JobConfig {
    std::string experiment = "train";   // results.json "experiment"
    cli::CommonFlags common;
    DataConfig data;
    std::string arch;                   // empty: the dataset's default small model
    std::string method = "pgd_at";
    std::string init;                   // start from these weights (FRL fine-tunes a PGD-AT model); ignored on --resume
    MethodOptions method_options;
    std::string eps;                    // "8/255" or "0.1"; empty: the dataset's default (training and evaluation)
    TrainerConfig trainer;              // epochs, out_dir, resume and seed come from `common`
    std::string final_attacks = "pgd20";                    // besides clean
    std::string final_checkpoints = "last,best_robust";     // last, best_robust, best_fair (ema_ variants with --ema)
    // Common corruptions for each final checkpoint (eval/corruption_eval.h): all, benchmark, fair-tat or names; empty:
    // off. Written to eval_<checkpoint>_corruptions/.
    std::string final_corruptions;
    std::string corruption_severities = "1,2,3,4,5";
    std::string precision;              // --precision fp32|bf16: the training step's CPU convolutions and matrix products; empty: the environment's
};

// Adds every job flag except the common ones (add those with cli::add_common_flags).
void add_job_flags(cli::FlagSet& app, JobConfig& job);

// ε by dataset when --eps is not given: MNIST 0.3, Fashion-MNIST 0.1, CIFAR-10/100, SVHN, GTSRB 8/255.
float default_eps(const std::string& dataset);
std::string default_arch(const std::string& dataset);

// The entries of job.json that shape `job`'s training and need no data (training_keys() but train_images), as
// run_job records them. A study checks a finished arm against them before --resume skips it.
nlohmann::json training_settings(const JobConfig& job);

// Runs the job; throws on errors (the binaries turn them into one line). Returns 0, or 130 / 143 when a signal
// interrupted training (the state is saved; rerun with --resume).
int run_job(JobConfig& job, std::ostream& out);

}  // namespace cw::train
