#pragma once
// Which corruptions and severities a corruption evaluation runs (eval/corruption_eval.h), from the flags
// --final-corruptions / --corruptions and --corruption-severities. Named sets:
//   all        the 19 of CIFAR-10-C, in its file order (the default of the evaluation)
//   benchmark  the 15 of Hendrycks & Dietterich's benchmark (mCE): all but speckle_noise, gaussian_blur, spatter,
//              saturate
//   fair-tat   the 18 of FAIR-TAT's Tables 3-4 (all but glass_blur), in the tables' row order
// or a comma-separated list of names (a set name may appear in the list too; duplicates are dropped).
#include <string>
#include <vector>

namespace cw::eval {

const std::vector<std::string>& benchmark_corruptions();
const std::vector<std::string>& fair_tat_corruptions();

// "" → none (the evaluation is off). Throws std::invalid_argument naming `flag` and the bad name.
std::vector<std::string> parse_corruption_list(const std::string& flag, const std::string& text);
// "1,2,3,4,5", "3", "1-5"; ascending, no duplicates. Throws std::invalid_argument naming `flag` otherwise.
std::vector<int> parse_severities(const std::string& flag, const std::string& text);

}  // namespace cw::eval
