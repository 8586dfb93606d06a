// Nothing in the repository points outside it (tests/check_outside_paths.sh states the rule): the check passes on the
// repository itself, and fails, naming file and line, on a planted copy of every kind of outside reference — so the
// check is seen to bite, not only to stay quiet.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/test_datasets_fixtures.h"
#include "tests/test_process.h"

namespace {

namespace fs = std::filesystem;
using cw_test::repo_root;

std::string check_command(const std::string& dir) {
    return "bash '" + (repo_root() / "tests" / "check_outside_paths.sh").string() + "' '" + dir + "' 2>&1";
}

// The pieces are joined at run time so that this file does not contain what it plants.
const std::string beside = std::string("..") + "/shared/data/unpack.sh";
const std::string machine_data = std::string("/wo") + "rk/main/data";
const std::string machine_tmp = std::string("/tm") + "p/cw_runs/quick";
const std::string spec_name = std::string("train") + "ing.md";

// A throwaway git repository holding `files` (path, text).
void make_repo(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [path, text] : files) {
        fs::create_directories((fs::path(dir) / path).parent_path());
        std::ofstream(fs::path(dir) / path) << text;
    }
    REQUIRE(cw_test::run_shell("cd '" + dir + "' && git init -q . && git add -A 2>&1").code == 0);
}

}  // namespace

TEST_CASE("outside paths: no tracked file points outside the repository", "[docs][outside-paths]") {
    const auto o = cw_test::run_shell(check_command(repo_root().string()));
    INFO(o.text);
    CHECK(o.code == 0);
    CHECK(o.text.empty());
}

TEST_CASE("outside paths: each kind of outside reference is caught, the allowed uses pass", "[docs][outside-paths]") {
    cw_fixtures::TempDir dir;
    make_repo(dir.path(), {
        {"docs/protocols/" + spec_name, "# the page\n"},
        {"docs/results_json.md", "contract\n"},
        // allowed: pages resolved from the root or from the file's folder, system paths, a mktemp template, a link
        // that climbs but stays inside
        {"src/good.cpp", "// see docs/protocols/" + spec_name + " §4 and /usr/local/cuda, /dev/null, /usr/share/datasets\n"
                         "char tmpl[] = \"/tm" "p/cw_x_XXXXXX\";\n"},
        {"docs/protocols/index.md", "[t](" + spec_name + ") and [r](../results_json.md)\n"},
        // planted, one kind per line
        {"src/bad.cpp", "// offline: " + beside + " <dir>\n"
                        "// data in " + machine_data + "\n"
                        "// runs in " + machine_tmp + "\n"
                        "// as " + spec_name + " §4 says\n"
                        "// see is" "sue 12\n"},
        {"README.md", "[up](../elsewhere/notes.txt)\n"},
        {".ci/run", "cp " + beside + " " + machine_data + "\n"},   // the one file allowed to know
    });
    const auto o = cw_test::run_shell(check_command(dir.path()));
    INFO(o.text);
    CHECK(o.code == 1);
    CHECK_THAT(o.text, Catch::Contains("src/bad.cpp:1: a folder beside the checkout"));
    CHECK_THAT(o.text, Catch::Contains("src/bad.cpp:2: a machine's folder (" + machine_data + ")"));
    CHECK_THAT(o.text, Catch::Contains("src/bad.cpp:3: a machine's folder (" + machine_tmp + ")"));
    CHECK_THAT(o.text, Catch::Contains("src/bad.cpp:4: a spec file that is not in the repository (" + spec_name + ")"));
    CHECK_THAT(o.text, Catch::Contains("src/bad.cpp:5: an issue-tracker reference"));
    CHECK_THAT(o.text, Catch::Contains("README.md:1: a path that leaves the repository"));
    CHECK(o.text.find("good.cpp") == std::string::npos);
    CHECK(o.text.find("index.md") == std::string::npos);
    CHECK(o.text.find(".ci/run") == std::string::npos);
}
