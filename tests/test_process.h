#pragma once
// Running a project binary from a test: where the repository is, and a shell command's exit code and output.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace cw_test {

// The repository root: the test binary is <root>/build/tests/classwise_tests.
inline std::filesystem::path repo_root() {
    return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path().parent_path();
}

struct CommandOutput {
    int code = -1;          // the exit status; -1 when the command did not exit normally
    std::string text;       // what it wrote on stdout (redirect stderr in `command` to see it too)
};

// Runs `command` through /bin/sh and waits for it.
inline CommandOutput run_shell(const std::string& command) {
    CommandOutput o;
    FILE* p = popen(command.c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    while (size_t n = fread(buf.data(), 1, buf.size(), p)) o.text.append(buf.data(), n);
    const int status = pclose(p);
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
}

}  // namespace cw_test
