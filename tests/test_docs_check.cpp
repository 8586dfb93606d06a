// The documentation is reference for a user (tests/check_docs.sh states the rules): the check passes on the
// repository itself, and fails, naming file and line, on a planted page that narrates how it was made, a README
// verdict table out of step with the committed results, a page no index links and a link to a missing page — so
// the check is seen to bite, not only to stay quiet.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/test_datasets_fixtures.h"
#include "tests/test_process.h"

namespace {

namespace fs = std::filesystem;
using cw_test::repo_root;

std::string check_command(const std::string& dir) {
    return "bash '" + (repo_root() / "tests" / "check_docs.sh").string() + "' '" + dir + "' 2>&1";
}

// The pieces are joined at run time so that this file does not contain what it plants.
const std::string period = std::string("third working") + " period";
const std::string begin_marker =
    "<!-- verdict table: written by build/tools/reproduction_report --readme README.md; edit the results, not this -->";
const std::string end_marker = "<!-- end of verdict table -->";

// The README's verdict table as the repository has it (between the markers, without them).
std::string readme_table() {
    std::ifstream in(repo_root() / "README.md");
    std::string line, table;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line.rfind("<!-- end of verdict table", 0) == 0) break;
        if (inside) table += line + "\n";
        if (line.rfind("<!-- verdict table:", 0) == 0) inside = true;
    }
    return table;
}

// A throwaway git repository holding `files` (path, text), its results/ the repository's own (a link).
void make_repo(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [path, text] : files) {
        fs::create_directories((fs::path(dir) / path).parent_path());
        std::ofstream(fs::path(dir) / path) << text;
    }
    fs::create_directory_symlink(repo_root() / "results", fs::path(dir) / "results");
    REQUIRE(cw_test::run_shell("cd '" + dir + "' && git init -q . && git add -A 2>&1").code == 0);
}

}  // namespace

TEST_CASE("docs check: the pages are reference and the README's verdict table is current", "[docs][docs-check]") {
    const auto o = cw_test::run_shell(check_command(repo_root().string()));
    INFO(o.text);
    CHECK(o.code == 0);
    CHECK(o.text.empty());
}

TEST_CASE("docs check: a narrating page, a stale verdict table, an orphan and a dead link are caught",
          "[docs][docs-check]") {
    const std::string table = readme_table();
    REQUIRE(table.find("| claim (paper) |") != std::string::npos);
    SECTION("the repository's own table, pages linked: nothing to say") {
        cw_fixtures::TempDir dir;
        make_repo(dir.path(), {
            {"README.md", "# x\n\n" + begin_marker + "\n" + table + end_marker + "\n\n[docs](docs/README.md)\n"},
            {"docs/README.md", "- [page.md](page.md)\n"},
            {"docs/page.md", "A reference page.\n"},
        });
        const auto o = cw_test::run_shell(check_command(dir.path()));
        INFO(o.text);
        CHECK(o.code == 0);
        CHECK(o.text.empty());
    }
    SECTION("planted, one kind per page") {
        // The table with one effect changed: the committed results no longer give it.
        std::string stale = table;
        const auto at = stale.find("+27.9");
        REQUIRE(at != std::string::npos);
        stale.replace(at, 5, "+29.7");
        cw_fixtures::TempDir dir;
        make_repo(dir.path(), {
            {"README.md", "# x\n\n" + begin_marker + "\n" + stale + end_marker + "\n"},
            {"docs/README.md", "- [page.md](page.md)\n- [dead.md](dead.md)\n"},
            {"docs/page.md", "A reference page.\nIn the " + period + " the study moved.\n"},
            {"docs/orphan.md", "No index links this page.\n"},
            {"tests/fixtures/expected.md", "the " + period + " (a fixture, not a page)\n"},
        });
        const auto o = cw_test::run_shell(check_command(dir.path()));
        INFO(o.text);
        CHECK(o.code == 1);
        CHECK_THAT(o.text, Catch::Contains("docs/page.md:2: a page speaks of how it was made (working period)"));
        CHECK_THAT(o.text, Catch::Contains("README.md:3: the verdict table is out of step with results/reproduction"));
        CHECK_THAT(o.text, Catch::Contains("docs/orphan.md:1: not linked from docs/README.md"));
        CHECK_THAT(o.text, Catch::Contains("docs/README.md:2: a link to a page that does not exist (dead.md)"));
        CHECK(o.text.find("fixtures") == std::string::npos);
    }
    SECTION("no markers: no table") {
        cw_fixtures::TempDir dir;
        make_repo(dir.path(), {{"README.md", "# x\n"}});
        const auto o = cw_test::run_shell(check_command(dir.path()));
        INFO(o.text);
        CHECK(o.code == 1);
        CHECK_THAT(o.text, Catch::Contains("README.md:1: no verdict table"));
    }
}
