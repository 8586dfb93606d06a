#include "datasets/file_io.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>

#include "datasets/error.h"
#include "datasets/inflate.h"

namespace fs = std::filesystem;

namespace cw::data {

bool file_exists(const std::string& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec);
}

bool directory_exists(const std::string& path) {
    std::error_code ec;
    return fs::is_directory(path, ec);
}

uint64_t file_size(const std::string& path) {
    if (!file_exists(path)) fail(path, "file not found");
    std::error_code ec;
    const auto n = fs::file_size(path, ec);
    if (ec) fail(path, "cannot read the file size (" + ec.message() + ")");
    return n;
}

namespace {
std::ifstream open_binary(const std::string& path) {
    if (!file_exists(path)) fail(path, "file not found");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, std::string("cannot open (") + std::strerror(errno) + ")");
    return in;
}
}  // namespace

std::vector<uint8_t> read_file(const std::string& path) {
    const uint64_t n = file_size(path);
    return read_file_range(path, 0, n);
}

std::vector<uint8_t> read_file_range(const std::string& path, uint64_t offset, uint64_t count) {
    std::ifstream in = open_binary(path);
    const uint64_t n = file_size(path);
    if (offset > n || count > n - offset)
        fail(path, "file is " + std::to_string(n) + " bytes; expected at least " + std::to_string(offset + count));
    std::vector<uint8_t> bytes(count);
    in.seekg(static_cast<std::streamoff>(offset));
    if (count && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(count)))
        fail(path, "read error after " + std::to_string(in.gcount()) + " of " + std::to_string(count) + " bytes");
    return bytes;
}

std::vector<uint8_t> read_file_maybe_gzip(const std::string& path) {
    std::vector<uint8_t> raw = read_file(path);
    if (!is_gzip(raw.data(), raw.size())) return raw;
    return inflate_all(raw.data(), raw.size(), ZFormat::Gzip, path, max_inflated_size(raw.size()), 4 * raw.size());
}

std::string read_text_file(const std::string& path) {
    std::vector<uint8_t> raw = read_file(path);
    return std::string(raw.begin(), raw.end());
}

std::vector<std::string> list_files(const std::string& dir, const std::string& suffix) {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code ec2;
        if (!it->is_regular_file(ec2)) continue;
        std::string name = it->path().filename().string();
        if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            names.push_back(std::move(name));
    }
    if (ec) fail(dir, "cannot list the folder (" + ec.message() + ")");
    std::sort(names.begin(), names.end());
    return names;
}

std::string join_path(const std::string& a, const std::string& b) {
    if (a.empty()) return b;
    if (a.back() == '/') return a + b;
    return a + "/" + b;
}

}  // namespace cw::data
