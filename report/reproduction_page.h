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

// The whole page, in Markdown: the intro, the verdict table, the pilot, and a section per dataset. `datasets` in
// page order (folders under `results`); those with neither runs (results/<d>) nor pilot runs (results/pilot/<d>)
// are left out, so a dataset joins the page, in its place, once its first results are committed.
std::string reproduction_page(const std::filesystem::path& results, const std::vector<std::string>& datasets);

// The datasets of `datasets`, in that order, that have runs or pilot runs under `results`.
std::vector<std::string> datasets_present(const std::filesystem::path& results, const std::vector<std::string>& datasets);

// The study's main verdicts as one Markdown table, the page's and the README's: a row per headline claim
// (ClaimSpec::headline) and the weakest-classes finding, a column per dataset with runs (in `datasets` order),
// each cell the verdict, the effect with its 95% interval and the seed count.
std::string verdict_table(const std::filesystem::path& results, const std::vector<std::string>& datasets);

// The dataset's name on the page ("fashion-mnist" -> "Fashion-MNIST"); the folder name for one it does not know.
std::string dataset_title(const std::string& dataset);

// The README's verdict table sits between these two lines; `text` with what lies between them replaced by `block`
// (throws when either is missing).
extern const char* const readme_begin;
extern const char* const readme_end;
std::string replace_marked_block(const std::string& text, const std::string& block);

}  // namespace cw::report::reproduction
