#pragma once
// Whole-file and ranged reads with DataError on failure, plus transparent gunzip for formats that are shipped
// either way (MNIST's .gz IDX files).
#include <cstdint>
#include <string>
#include <vector>

namespace cw::data {

bool file_exists(const std::string& path);       // a regular file (or a link to one)
bool directory_exists(const std::string& path);
uint64_t file_size(const std::string& path);      // throws DataError if missing

std::vector<uint8_t> read_file(const std::string& path);
// `count` bytes starting at `offset`; throws if the file is shorter.
std::vector<uint8_t> read_file_range(const std::string& path, uint64_t offset, uint64_t count);
// The file's bytes, gunzipped if they start with the gzip magic.
std::vector<uint8_t> read_file_maybe_gzip(const std::string& path);
std::string read_text_file(const std::string& path);

// Names (not paths) of the regular files in `dir` whose name ends with `suffix`, sorted, for a stable order
// independent of the filesystem.
std::vector<std::string> list_files(const std::string& dir, const std::string& suffix);

std::string join_path(const std::string& a, const std::string& b);

}  // namespace cw::data
