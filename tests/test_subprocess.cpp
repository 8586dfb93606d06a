// report/subprocess.h: an external program started with posix_spawnp (no fork of our large process), in another
// folder when asked, stdout discarded, stderr captured, and a one-line reason when it cannot be started.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/subprocess.h"
#include "tests/test_nn_util.h"

namespace fs = std::filesystem;
using cw::report::ProcessResult;
using cw::report::run_program;

TEST_CASE("run_program: the child runs in the folder asked for, its exit code and stderr come back", "[report][subprocess]") {
    cw_nn_test::ScratchDir scratch;
    const fs::path dir = scratch.path / "child folder";   // a space: no shell ever re-parses it
    fs::create_directories(dir);
    const ProcessResult r = run_program({"sh", "-c", "pwd >&2; echo on-stdout; read line; echo \"[$line]\" >&2; exit 3"},
                                        dir.string());
    REQUIRE(r.started);
    REQUIRE(r.exit_code == 3);
    // pwd in the child's folder; stdin is /dev/null (read gets nothing); stdout is discarded.
    REQUIRE(r.stderr_text == fs::canonical(dir).string() + "\n[]\n");

    const ProcessResult here = run_program({"sh", "-c", "pwd >&2"});
    REQUIRE(here.exit_code == 0);
    REQUIRE(here.stderr_text == fs::current_path().string() + "\n");
}

TEST_CASE("run_program: a missing program or folder is one line naming it, exit code 127", "[report][subprocess]") {
    const ProcessResult missing = run_program({"cw-no-such-program", "--flag"});
    REQUIRE_FALSE(missing.started);
    REQUIRE(missing.exit_code == 127);
    REQUIRE(missing.stderr_text == "cw-no-such-program: cannot run: not found in PATH");

    const ProcessResult no_file = run_program({"/nonexistent/cw-tool"});
    REQUIRE_FALSE(no_file.started);
    REQUIRE(no_file.stderr_text == "/nonexistent/cw-tool: cannot run: No such file or directory");

    cw_nn_test::ScratchDir scratch;
    const std::string gone = (scratch.path / "gone").string();
    const ProcessResult no_dir = run_program({"sh", "-c", "true"}, gone);
    REQUIRE_FALSE(no_dir.started);
    REQUIRE(no_dir.stderr_text == gone + ": cannot enter: No such file or directory");

    // Found but not executable: the system's reason, with the folder it was to run in.
    const fs::path plain = scratch.path / "plain.sh";
    { std::ofstream(plain) << "#!/bin/sh\n"; }
    const ProcessResult denied = run_program({plain.string()}, scratch.path.string());
    REQUIRE_FALSE(denied.started);
    REQUIRE(denied.stderr_text == plain.string() + ": cannot run: Permission denied (in " + scratch.path.string() + ")");
    for (const ProcessResult* r : {&missing, &no_file, &no_dir, &denied}) REQUIRE(r->stderr_text.find('\n') == std::string::npos);
}
