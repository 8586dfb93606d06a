#pragma once
// A job of a study that is not a training run (study/study.h: Arm::work): benz_features' construction of a feature
// dataset from a source model, one linear model of gaussian_theory. It is a job like any other — listed on its
// dependency level, run alone by --job under the lock, refused while its inputs are unfinished, counted by --summary,
// chained by --slurm — and the study gives it what a training arm gets: its folder, its seed (--seed, plus k with
// --seeds), the folders of the jobs it needs, and the common flags. It answers two things: run it (resumable: with
// common.resume it keeps what it finished before; a signal stops it with its state saved) and whether it has
// finished (every output written).
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>

#include "cli/common_flags.h"

namespace cw::study {

struct WorkRun {
    std::string dir;                              // the job's folder (it exists when run is called)
    uint64_t seed = 0;                            // --seed, plus k with --seeds
    std::map<std::string, std::string> inputs;   // arm name → the folder of that arm's job of the same seed
    cli::CommonFlags common;                      // the study's; out is the job's folder
};

struct Work {
    std::string what;                                          // printed: "<job> (<what>) into <dir>"
    std::function<int(const WorkRun&, std::ostream&)> run;     // 0, or 130 / 143 when a signal stopped it
    std::function<bool(const std::string& dir)> finished;      // every output of the job in `dir` is written
};

}  // namespace cw::study
