// The folders form layers (docs/layers.md): tests/check_layers.sh fails on an include against the order. Run on the
// repository it must pass; run on small planted trees it must name each wrong include, and pass the right ones.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/test_process.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

// A throw-away source tree: files written under a fresh folder, removed at the end.
struct Tree {
    fs::path root = fs::temp_directory_path() / ("cw_layers_" + std::to_string(::getpid()));
    Tree() {
        fs::remove_all(root);
        fs::create_directories(root);
    }
    ~Tree() { fs::remove_all(root); }
    void write(const std::string& file, const std::string& text) const {
        fs::create_directories((root / file).parent_path());
        std::ofstream(root / file) << text;
    }
};

cw_test::CommandOutput check(const fs::path& root) {
    return cw_test::run_shell("sh '" + (cw_test::repo_root() / "tests/check_layers.sh").string() + "' '" +
                              root.string() + "' 2>&1");
}

}  // namespace

TEST_CASE("layers: every include of the repository follows the layer order", "[layers]") {
    const auto out = check(cw_test::repo_root());
    INFO(out.text);
    REQUIRE(out.code == 0);
    CHECK_THAT(out.text, Contains("includes in order"));
}

TEST_CASE("layers: an include from a lower layer, or between siblings, fails with its file and line", "[layers]") {
    Tree t;
    t.write("util/a.h", "#pragma once\n");
    t.write("engine/tensor.h", "#pragma once\n#include \"util/a.h\"\n#include <vector>\n");
    t.write("eval/evaluator.cpp", "#include \"eval/evaluator.h\"\n#include \"engine/tensor.h\"\n#include \"nlohmann/json.hpp\"\n");
    t.write("tests/test_x.cpp", "#include \"jobs/job.h\"\n#include \"eval/evaluator.h\"\n");
    {
        const auto out = check(t.root);
        INFO(out.text);
        REQUIRE(out.code == 0);   // downward, within a folder, third-party, and anything from tests/
        CHECK_THAT(out.text, Contains("layers: 5 includes in order"));
    }
    SECTION("eval includes train (one layer up)") {
        t.write("eval/records.cpp", "// records\n#include \"engine/tensor.h\"\n#include \"train/trainer.h\"\n");
        const auto out = check(t.root);
        INFO(out.text);
        REQUIRE(out.code == 1);
        CHECK_THAT(out.text, Contains("eval/records.cpp:3: includes train/trainer.h: eval (layer 4) may not include "
                                      "train (layer 5, a higher layer)"));
        CHECK_THAT(out.text, Contains("layers: 1 include(s) against the layer order"));
    }
    SECTION("report included from train: the old train/job.cpp -> report edge") {
        t.write("train/job.cpp", "#  include \"report/run_page.h\"\n");
        const auto out = check(t.root);
        REQUIRE(out.code == 1);
        CHECK_THAT(out.text, Contains("train/job.cpp:1: includes report/run_page.h: train (layer 5) may not include "
                                      "report (layer 7, a higher layer)"));
    }
    SECTION("siblings: nn and datasets share a layer and do not include each other") {
        t.write("nn/layers.h", "#include \"datasets/mnist.h\"\n");
        const auto out = check(t.root);
        REQUIRE(out.code == 1);
        CHECK_THAT(out.text, Contains("nn (layer 2) may not include datasets (layer 2, siblings on one layer)"));
    }
    SECTION("a folder of sources without a layer") {
        t.write("scratch/x.cpp", "int x;\n");
        const auto out = check(t.root);
        REQUIRE(out.code == 1);
        CHECK_THAT(out.text, Contains("scratch/: no layer"));
    }
}
