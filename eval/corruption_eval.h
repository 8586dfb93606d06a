#pragma once
// Class-wise accuracy under common corruptions (FAIR-TAT Tables 3-4; Benz et al.'s per-class corruption study):
// a model on the clean test images and on every corrupted copy, one pass per corruption and severity.
//
//   CorruptionEvalOptions opt;  opt.info = ...;  opt.out_dir = "runs/x/corruptions";  opt.resume = true;
//   evaluate_corruptions(model, test_set, indices, opt);   // results.json, records.csv, corruption_state.json
//
// Where the corrupted images come from, per corruption (results.json says it in each entry's attack.source):
//   "cifar10-c"  the official CIFAR-10-C file <data_dir>/CIFAR-10-C/<name>.npy (data/loaders.h load_cifar10c),
//                when info.dataset is "cifar10", the evaluated images are the whole test set in order, and the
//                file's images and labels line up with it (same count, same labels);
//   "generated"  otherwise datasets/corruptions.h on the evaluated images: image i of the list (the dataset index for
//                the first-N subsets audit and train evaluate) draws from Rng(image_seed(k, i)), k a hash of
//                (corruption_seed, name, severity) — fixed, so every model meets the same corrupted images.
// Scoring is plain accuracy on the corrupted image (eval/corruption_results.h), not AutoAttack's rule.
// Resumable per corruption: out_dir/corruption_state.json holds the clean predictions and each finished corruption;
// a resumed run may name more or fewer corruptions, but the same severities, seed, samples and run key.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "eval/corruption_results.h"
#include "eval/evaluator.h"
#include "nn/module.h"

namespace cw::eval {

struct CorruptionEvalOptions {
    RunInfo info;                          // results.json header; info.classes gives the class count
    std::vector<std::string> corruptions;  // names (eval/corruption_set.h); empty: all 19
    std::vector<int> severities = {1, 2, 3, 4, 5};
    std::string data_dir;                  // where CIFAR-10-C is looked for ("": $CLASSWISE_DATA, else ./data)
    uint64_t corruption_seed = 0;          // generated corruptions; not the run's seed, so models share images
    int64_t batch_size = 256;
    std::string out_dir;                   // results.json, records.csv, corruption_state.json; empty: write nothing
    bool resume = false;                   // continue from out_dir/corruption_state.json if it exists
    std::ostream* log = nullptr;
    int64_t stop_after_corruptions = -1;   // tests: throw EvalInterrupted after this many corruptions of this call
    std::function<bool()> should_stop;     // asked after every saved corruption: true stops there (EvalInterrupted)
    nlohmann::json run_key = nlohmann::json::object();   // what else a resumed state must match (checkpoint, ...)
};

struct CorruptionOutcome {
    std::vector<CorruptionRun> runs;       // in the order of options.corruptions
    EvalRecords records;                   // one column per corruption and severity (records.csv)
    nlohmann::json results;                // results.json
};

// The corruption evaluation that goes with a clean-and-attacks evaluation (an audit's, a job's final checkpoint's):
// its results.json header, resume, log, stop and run key, written to `out_dir`. The corruptions, severities, data
// folder and batch size are the caller's.
CorruptionEvalOptions corruption_options_like(const EvalOptions& evaluation, const std::string& out_dir);

// `indices`: the test images evaluated, in order. Throws on a bad name or severity before any work.
CorruptionOutcome evaluate_corruptions(nn::Module& model, const data::Dataset& test,
                                       const std::vector<int64_t>& indices, const CorruptionEvalOptions& options);

}  // namespace cw::eval
