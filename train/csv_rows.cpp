#include "train/csv_rows.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/atomic_file.h"

namespace cw::train {

void keep_rows_up_to(const std::string& path, const std::string& header, int64_t keep_up_to) {
    std::string kept = header + "\n";
    std::ifstream in(path);
    std::string line;
    if (keep_up_to >= 0 && in && std::getline(in, line) && line == header) {
        while (std::getline(in, line)) {
            char* end = nullptr;
            const long long key = std::strtoll(line.c_str(), &end, 10);
            if (end != line.c_str() && *end == ',' && key <= keep_up_to) kept += line + "\n";
        }
    }
    util::write_file_atomic(path, kept);
}

}  // namespace cw::train
