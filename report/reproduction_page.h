#pragma once
// docs/reproduction.md from the committed result files of the reproduction study (scripts/reproduction.sh): the
// intro (results/intro.md, written by hand), the pilot's criteria (reproduction_pilot.h), and per dataset every arm's
// per-seed summary, each paper claim as a paired effect over seeds with its 95% interval and verdict
// (reproduction_claims.h, claims.h), whether the same classes are the weakest, and whether the PGD-20 picture holds
// under AutoAttack.
#include <filesystem>
#include <string>
#include <vector>

namespace cw::report::reproduction {

// The whole page, in Markdown; `datasets` in page order (folders under `results`).
std::string reproduction_page(const std::filesystem::path& results, const std::vector<std::string>& datasets);

}  // namespace cw::report::reproduction
