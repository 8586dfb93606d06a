// Every binary of the project (experiments/*, tools/*) accepts the common flags through the one shared parser
// (cli/common_flags.h): --device --data-dir --out --seed --resume --quick --epochs, checked through --print-config.
#include <catch2/catch.hpp>

#include "tests/test_process.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using cw_test::repo_root;
using Output = cw_test::CommandOutput;

Output run(const std::string& command) { return cw_test::run_shell(command + " 2>&1"); }

// experiments/<name> (built next to its source) and build/tools/<name>, from the sources present.
std::vector<fs::path> project_binaries() {
    const fs::path root = repo_root();
    std::vector<fs::path> bins;
    for (const auto& [dir, built] : {std::pair<fs::path, fs::path>{root / "experiments", root / "experiments"},
                                     {root / "tools", root / "build/tools"}})
        for (const auto& e : fs::directory_iterator(dir))
            if (e.path().extension() == ".cpp") bins.push_back(built / e.path().stem());
    std::sort(bins.begin(), bins.end());
    return bins;
}

}  // namespace

TEST_CASE("cli: every binary accepts the common flags", "[cli]") {
    const auto bins = project_binaries();
    REQUIRE(bins.size() >= 3);   // quickstart, audit, train at least
    for (const fs::path& bin : bins) {
        INFO(bin.string());
        REQUIRE(fs::exists(bin));
        // --print-config reads and writes nothing, so the folders need not exist.
        const std::string data = (fs::temp_directory_path() / "cw_cli_data").string();
        const std::string out = (fs::temp_directory_path() / "cw_cli_out").string();
        const Output o = run(bin.string() + " --device cpu --data-dir " + data + " --out " + out + " --seed 7"
                                            " --resume --quick --epochs 2 --print-config");
        INFO(o.text);
        CHECK(o.code == 0);
        for (const std::string& want : {std::string("device=\"cpu\""), "data-dir=\"" + data + "\"", "out=\"" + out + "\"",
                                        std::string("seed=7"), std::string("resume=true"), std::string("quick=true"),
                                        std::string("epochs=2")})
            CHECK(o.text.find(want) != std::string::npos);
    }
}

TEST_CASE("cli: a bad common flag is one line naming it, exit code 1", "[cli]") {
    for (const fs::path& bin : project_binaries()) {
        INFO(bin.string());
        for (const std::string& bad : {std::string("--seed minus-one"), std::string("--device tpu"), std::string("--epochs 0")}) {
            const Output o = run(bin.string() + " " + bad);
            INFO(o.text);
            CHECK(o.code == 1);
            CHECK(o.text.find(bad.substr(0, bad.find(' '))) != std::string::npos);
            CHECK(std::count(o.text.begin(), o.text.end(), '\n') == 1);
        }
    }
}

TEST_CASE("cli: --quick fills the preset, a flag given explicitly wins", "[cli]") {
    const fs::path qs = repo_root() / "experiments/quickstart";
    const Output o = run(qs.string() + " --quick --epochs 2 --print-config");
    INFO(o.text);
    CHECK(o.code == 0);
    CHECK(o.text.find("epochs=2") != std::string::npos);      // given
    CHECK(o.text.find("train-n=2000") != std::string::npos);  // from the preset
    CHECK(o.text.find("out=\"runs/quickstart_quick\"") != std::string::npos);
}
