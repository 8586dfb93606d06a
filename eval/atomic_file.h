#pragma once
// Atomic file replacement: write `path`.tmp.<pid>, flush and fsync it, rename it over `path`. A crash leaves
// either the old file or the new one, never half of one — the evaluator's state file depends on that.
#include <string>

namespace cw::eval {

// Creates missing parent directories. Throws std::runtime_error naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& content);
// The whole file; throws std::runtime_error naming the path if it cannot be read.
std::string read_file_text(const std::string& path);

}  // namespace cw::eval
