#pragma once
// Helpers shared by the nn tests: fixture lookup, scratch folders, error messages.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/test_util.h"

namespace cw_nn_test {

using cw_test::error_of;

// tests/fixtures/<name>: found from the working directory, $CW_FIXTURES_DIR, or by walking up from the test
// binary (build/tests/classwise_tests -> repository root). "" if absent.
inline std::string fixture_path(const std::string& name) {
    namespace fs = std::filesystem;
    std::vector<fs::path> roots;
    if (const char* env = std::getenv("CW_FIXTURES_DIR")) roots.emplace_back(env);
    roots.emplace_back("tests/fixtures");
    std::error_code ec;
    fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
    for (int up = 0; up < 5 && !ec && !dir.empty(); ++up, dir = dir.parent_path()) roots.push_back(dir / "tests/fixtures");
    for (const auto& r : roots)
        if (fs::exists(r / name)) return (r / name).string();
    return "";
}

// A fresh folder under the system temp dir, removed with its content at scope exit.
struct ScratchDir {
    std::filesystem::path path;
    ScratchDir() {
        path = std::filesystem::temp_directory_path() / ("cw_nn_test_" + std::to_string(::getpid()) + "_" +
                                                        std::to_string(counter()++));
        std::filesystem::create_directories(path);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string file(const std::string& name) const { return (path / name).string(); }
    static int& counter() {
        static int n = 0;
        return n;
    }
};

}  // namespace cw_nn_test
