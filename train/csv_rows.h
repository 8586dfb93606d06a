#pragma once
// The training CSV files (history.csv, train_log.csv, steps.csv) are appended to as a run goes. A resumed run must
// continue them without the rows written after the checkpoint it resumes from (a crash can fall between a row and
// the checkpoint), so each file is cut back to the rows whose first field (epoch or step) is at most the resumed one.
#include <cstdint>
#include <string>

namespace cw::train {

// Makes `path` hold `header` plus the existing rows whose leading integer is <= keep_up_to (none if keep_up_to < 0
// or the existing header differs), rewriting it atomically.
void keep_rows_up_to(const std::string& path, const std::string& header, int64_t keep_up_to);

}  // namespace cw::train
