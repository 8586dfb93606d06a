#pragma once
// Several runs of one configuration (its seeds) as one table: what build/tools/seeds prints and the reports of
// scripts/baselines_report.sh and scripts/fair_methods_report.sh are made of.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cw::report {

struct MeanStd {
    // std: the sample standard deviation (n - 1); NaN for one value, which has no spread to estimate (shown "–")
    double mean = 0, std = 0;
};
MeanStd mean_std(const std::vector<double>& values);

// The seeds' results.json files, in the order given; each a results.json or the folder holding one. Throws naming
// the file when one is not a results.json or its classes differ from the first's.
struct SeedRuns {
    std::vector<std::string> names;   // as given
    std::vector<nlohmann::json> results;
    std::vector<std::string> classes;
};
SeedRuns load_seed_runs(const std::vector<std::string>& where);

// Per evaluation of the first run: overall, worst class, spread and every class as mean ± std in %, as a markdown
// table with a closing note; `summary` receives the same numbers as fractions (seeds.json).
std::string seed_table(const SeedRuns& runs, nlohmann::json& summary);

// One row of a fair method's summary against a reference method (the cells after the method and checkpoint):
// clean, clean worst, <attack>, <attack> worst, <attack> bottom 3 (the mean of the three weakest classes),
// <attack> spread, then the lifts of the attack's worst class, its bottom 3 and the clean worst class over the
// reference ("—" without one).
std::string summary_row(const SeedRuns& runs, const SeedRuns* reference, const std::string& attack);

// The method's mean minus the reference's, in points ("+8.0"), called real when every value of the method is above
// every value of the reference: "+8.0 (real)", "-0.6 (within the seeds)", "+0.0" when the means are equal. With one
// run on either side there is no spread to be past: "+8.0 (one seed)".
std::string lift(const std::vector<double>& method, const std::vector<double>& reference);

}  // namespace cw::report
