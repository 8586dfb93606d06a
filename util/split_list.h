#pragma once
// Comma-separated lists, as list-valued flags and job fields hold them (--attacks, --final-checkpoints).
#include <string>
#include <vector>

namespace cw::util {

// "a,b,,c" → {"a", "b", "c"}: empty items are dropped, nothing is trimmed.
std::vector<std::string> split_list(const std::string& text);

}  // namespace cw::util
