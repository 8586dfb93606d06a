#pragma once
// Running an external program (gnuplot, for the figures) without a shell, so that no path or argument is ever
// re-parsed: posix_spawnp (no fork of our process, which may hold gigabytes), stdin and stdout on /dev/null,
// stderr captured for the error message.
#include <string>
#include <vector>

namespace cw::report {

struct ProcessResult {
    bool started = false;      // false: the program or the folder was not found (stderr_text says which, in one line)
    int exit_code = -1;        // the program's exit status (128 + signal when killed); 127 when it was not started
    std::string stderr_text;   // what it wrote on stderr (its error messages), or why it was not started
};

// Runs argv[0] (looked up in PATH) with the arguments in directory `cwd` (empty: ours); waits for it.
ProcessResult run_program(const std::vector<std::string>& argv, const std::string& cwd = "");

// True when `program` is an executable file in PATH (or a path to one).
bool program_in_path(const std::string& program);

}  // namespace cw::report
