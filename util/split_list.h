#pragma once
// Comma-separated lists, as list-valued flags and job fields hold them (--attacks, --final-checkpoints), and lists
// joined for messages ("known: a, b, c").
#include <string>
#include <vector>

namespace cw::util {

// "a,b,,c" → {"a", "b", "c"}: empty items are dropped, nothing is trimmed.
std::vector<std::string> split_list(const std::string& text);

// {"a", "b", "c"} → "a, b, c" (with another separator: "a,b,c").
std::string join_list(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace cw::util
