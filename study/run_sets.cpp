#include "study/run_sets.h"

#include <filesystem>
#include <stdexcept>

#include "study/jobs.h"

namespace cw::study {

namespace fs = std::filesystem;

const std::string& RunSet::dir(const std::string& arm) const {
    const auto it = arm_dirs.find(arm);
    if (it == arm_dirs.end()) throw std::invalid_argument("run set: the study has no arm '" + arm + "'");
    return it->second;
}

std::string RunSet::titled(const std::string& title) const {
    return seed ? title + " (seed " + std::to_string(*seed) + ")" : title;
}

std::vector<RunSet> run_sets(const Study& s, const cli::CommonFlags& common, const StudyFlags& flags) {
    const std::string& out = common.out;
    const std::vector<uint64_t> seeds = parse_seeds(flags.seeds);
    std::vector<RunSet> sets;
    auto make = [&](std::optional<uint64_t> seed) {
        RunSet set;
        set.seed = seed;
        set.run_seed = common.seed + seed.value_or(0);   // as study/job_run.h's job_arm seeds a job
        set.study_out = out;
        set.link = seed ? "seed" + std::to_string(*seed) + "/" : "";
        set.up = seed ? "../" : "";
        set.out = seed ? (fs::path(out) / ("seed" + std::to_string(*seed))).string() : out;
        return set;
    };
    if (seeds.empty()) sets.push_back(make(std::nullopt));
    for (uint64_t k : seeds) sets.push_back(make(k));
    for (const StudyJob& j : study_jobs(s, out, seeds))
        for (RunSet& set : sets)
            if (set.seed == j.seed) set.arm_dirs[s.arms[j.arm].name] = j.dir;
    return sets;
}

}  // namespace cw::study
