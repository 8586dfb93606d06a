#pragma once
// The evaluator's closing table: one row per class (name, clean accuracy, accuracy under each attack, in %) and
// an "overall" row, computed from the per-sample records.
#include <ostream>
#include <string>
#include <vector>

#include "eval/eval_records.h"

namespace cw::eval {

void print_class_table(std::ostream& os, const EvalRecords& records, const std::vector<std::string>& classes);

}  // namespace cw::eval
