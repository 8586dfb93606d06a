#pragma once
// Comma-separated lists, as list-valued flags and job fields hold them (--attacks, --final-checkpoints), and lists
// joined for messages ("known: a, b, c").
#include <string>
#include <vector>

namespace cw::util {

// "a,b,,c" → {"a", "b", "c"}: empty items are dropped, nothing is trimmed.
std::vector<std::string> split_list(const std::string& text);

// One item of a list flag that must be a positive, finite number, all of it ("6x", "-1", "nan" are not): throws
// std::invalid_argument "<flag>: '<item>' is not a positive number".
float positive_number(const std::string& flag, const std::string& item);

// {"a", "b", "c"} → "a, b, c" (with another separator: "a,b,c").
std::string join_list(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace cw::util
