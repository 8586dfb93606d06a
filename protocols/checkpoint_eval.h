#pragma once
// One checkpoint evaluated class by class on a dataset's test images outside a training job: the second pass of
// an experiment (Xu et al.'s PGD-20 at 4/255 beside the job's 8/255) and the audit of given --weights (FAIR-TAT's
// CFP analysis of any model). The architecture comes from the checkpoint's metadata (nn::load_model_from_checkpoint),
// the images are the same ones a training job evaluates: the first n of the test split, after --classes top:K
// when the model was trained on K classes. Writes results.json and records.csv into out_dir (eval/evaluator.h).
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "jobs/job.h"

namespace cw::protocols {

struct CheckpointEval {
    std::string weights;               // .safetensors with architecture metadata (every classwise checkpoint has it)
    std::string dataset;               // empty: the checkpoint's own "dataset" metadata
    std::string classes = "all";       // all, or top:K (the K classes with the most training images, as the job)
    std::string data_dir;
    int64_t n = 0;                     // the first n test images (0: all)
    int64_t batch_size = 256;
    std::string device = "auto";
    uint64_t seed = 0;
    float eps = 8.f / 255, alpha = 2.f / 255;
    std::vector<std::string> attacks;  // attacks/registry.h names; "clean" is always evaluated
    std::string out_dir;
    bool resume = false;
    std::string experiment = "audit", command_line;
    // Asked after every saved step: true stops there (eval::EvalInterrupted, the state saved). Empty: runs to the end
    // (inside a study, which sees a signal between jobs).
    std::function<bool()> should_stop;
};

// `weights` evaluated as `job` evaluates its own checkpoints: its classes, data folder, first --eval-n test images,
// evaluation batch size, device, seed, resume, experiment and command line; into `out_dir`; stopped by a signal
// (train::stop_requested) under the caller's StopSignalScope. The dataset, radius and attacks are the caller's.
CheckpointEval checkpoint_eval_like(const train::JobConfig& job, const std::string& weights, const std::string& out_dir);

// Returns the results.json written. Throws one line naming the checkpoint or dataset on a problem (no metadata,
// a class count or image geometry that does not match the data).
nlohmann::json evaluate_checkpoint(const CheckpointEval& config, std::ostream& log);

// The --classes rule is the job's (jobs/job.h), so a checkpoint is evaluated on the classes it was trained on.
using train::classes_kept;

}  // namespace cw::protocols
