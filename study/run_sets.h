#pragma once
// Where a finished study's runs are, for the tables an experiment makes after it (a paper's Table 1, its figures).
// Without --seeds there is one set: each arm in <out>/<arm>, the tables written into <out>. With --seeds 0,1,2 there
// is one set per seed k: each arm in <out>/<arm>/seed<k>, the tables into <out>/seed<k>/ — the paper's tables once
// per seed, beside the study's summary.md, which has the mean ± std over the seeds.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/study.h"
#include "study/study_flags.h"

namespace cw::study {

struct RunSet {
    std::optional<uint64_t> seed;                  // none without --seeds
    uint64_t run_seed = 0;                         // the --seed its runs trained with: --seed, plus k with --seeds
    std::string out;                               // where this set's tables go: <out>, or <out>/seed<k>
    std::string study_out;                         // the study's folder, where its summary.md is
    std::string link;                              // `out` as a link from study_out: "" or "seed<k>/"
    std::string up;                                // study_out as a link from `out`: "" or "../"
    std::map<std::string, std::string> arm_dirs;   // arm name → its run folder

    // The run folder of `arm`; throws naming the arm when the study has none of that name.
    const std::string& dir(const std::string& arm) const;
    // `title`, with " (seed k)" when the set is one seed's.
    std::string titled(const std::string& title) const;
};

// The sets of study `s` run with `common`'s --out and --seed and `flags`' --seeds, in seed order.
std::vector<RunSet> run_sets(const Study& s, const cli::CommonFlags& common, const StudyFlags& flags);

}  // namespace cw::study
