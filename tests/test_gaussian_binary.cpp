// experiments/gaussian_theory end to end: its --quick protocol on a tiny configuration writes one results.json per
// trained model that carries the contract's fields (docs/results_json.md), theory.csv and the page.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/atomic_file.h"
#include "eval/results_json.h"
#include "tests/test_process.h"

namespace fs = std::filesystem;
using namespace cw;

namespace {
using cw_test::repo_root;

int run_command(const std::string& command, std::string& text) {
    const cw_test::CommandOutput o = cw_test::run_shell(command + " 2>&1");
    text += o.text;
    return o.code;
}
}  // namespace

TEST_CASE("gaussian training: the binary's --quick protocol on a tiny config writes contract results.json", "[gaussian]") {
    const fs::path out = fs::temp_directory_path() / "cw_gaussian_quick_test";
    fs::remove_all(out);
    std::string text;
    const int code = run_command((repo_root() / "experiments/gaussian_theory").string() +
                                     " --quick --device cpu --m 4 --d 40 --samples 1500 --test-samples 400 --epochs 3"
                                     " --k-sweep 1.5,2 --eps-sweep 0.3,0.5 --eps0 0.4 --out " + out.string(),
                                 text);
    INFO(text);
    REQUIRE(code == 0);
    CHECK(text.find("Omega") != std::string::npos);
    // Two K values x (natural + AT at ε) plus AT at ε = 0.3 for the base K.
    const std::vector<std::string> models = {"K1.5_natural", "K1.5_eps0.5_adversarial", "K2_natural",
                                             "K2_eps0.3_adversarial", "K2_eps0.5_adversarial"};
    for (const std::string& m : models) {
        INFO(m);
        const fs::path file = out / m / "results.json";
        REQUIRE(fs::exists(file));
        CHECK(fs::exists(out / m / "records.csv"));
        const nlohmann::json j = nlohmann::json::parse(util::read_file_text(file.string()));
        for (const std::string& f : eval::results_required_fields()) CHECK(j.contains(f));
        CHECK(j.at("classes") == nlohmann::json::array({"-1", "+1"}));
        CHECK(j.at("num_examples") == 400);
        REQUIRE(j.at("evaluations").size() == 2);
        for (const auto& e : j.at("evaluations")) {
            const bool attack = e.at("name") != "clean";
            for (const std::string& f : eval::evaluation_required_fields(attack)) CHECK(e.contains(f));
            if (attack) CHECK(e.at("attack").at("eps") == Approx(0.4));
        }
        CHECK(j.at("gaussian").at("eps0") == Approx(0.4));
    }
    const std::string csv = util::read_file_text((out / "theory.csv").string());
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 + 2);   // header, K sweep, eps sweep
    CHECK(fs::exists(out / "report.html"));
    fs::remove_all(out);
}
