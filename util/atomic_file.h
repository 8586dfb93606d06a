#pragma once
// Atomic file replacement: write `path`.tmp.<pid>, fsync it, rename it over `path`, fsync the folder. A crash leaves
// either the old file or the new one, never half of one — checkpoints and the evaluator's state file depend on it.
// On failure the temporary file is removed and a std::runtime_error names `path`, the step and the system's reason.
#include <cstddef>
#include <string>

namespace cw::util {

// The folder of `path` must exist (a missing one is named in the error).
void write_bytes_atomic(const std::string& path, const void* data, size_t size);

// Creates missing parent folders first.
void write_file_atomic(const std::string& path, const std::string& content);

// The whole file; throws std::runtime_error naming the path if it cannot be read.
std::string read_file_text(const std::string& path);

}  // namespace cw::util
