#pragma once
// Shared by the experiment-binary tests (tests/test_experiments_*.cpp): running a built binary of experiments/,
// reading back what it wrote, and checking a results.json against the contract (eval/results_json.h).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "util/atomic_file.h"
#include "eval/results_json.h"
#include "report/run_data.h"
#include "tests/test_process.h"

namespace cw_experiments_test {

namespace fs = std::filesystem;

using cw_test::repo_root;
using Output = cw_test::CommandOutput;

// Runs experiments/<binary> with `args`; `streams` picks what comes back ("2>&1": both, "2>&1 >/dev/null":
// stderr only). The comparison figures are switched off (CLASSWISE_GNUPLOT): the report's tests cover them, and
// gnuplot would take most of these tests' time.
inline Output run_experiment(const std::string& binary, const std::string& args,
                             const std::string& streams = "2>&1") {
    const std::string command = "CLASSWISE_GNUPLOT=/nonexistent " + (repo_root() / "experiments" / binary).string() +
                                " " + args + " " + streams;
    return cw_test::run_shell(command);
}

// A fresh output folder under the temporary directory.
inline fs::path fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    return d;
}

// Loads a results.json through the report's contract check and checks every required field by name as well.
inline nlohmann::json contract_results(const fs::path& file) {
    INFO(file.string());
    REQUIRE(fs::exists(file));
    const nlohmann::json j = cw::report::load_results_json(file.string());
    for (const std::string& f : cw::eval::results_required_fields()) CHECK(j.contains(f));
    for (const auto& e : j.at("evaluations")) {
        const bool attack = e.at("name") != "clean";
        for (const std::string& f : cw::eval::evaluation_required_fields(attack)) CHECK(e.contains(f));
        double cfp = 0;
        for (const auto& x : e.at("cfp")) cfp += x.is_number() ? x.get<double>() : 0.0;
        CHECK((cfp == Approx(1.0) || cfp == 0.0));   // the errors' shares, or none at all without errors
    }
    return j;
}

inline std::string read_text(const fs::path& file) {
    INFO(file.string());
    REQUIRE(fs::exists(file));
    return cw::util::read_file_text(file.string());
}

inline int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// The flags every experiment binary must take (brief: common flags, the job's, the method hyper-parameters).
inline const std::vector<std::string>& expected_help_flags() {
    static const std::vector<std::string> flags = {"--help", "--device", "--data-dir", "--out", "--seed", "--epochs",
                                                   "--quick", "--resume", "--dataset", "--train-n", "--eval-n",
                                                   "--lr", "--eps", "--beta", "--attack-steps", "--frl-tau1",
                                                   "--final-attacks", "--methods"};
    return flags;
}

}  // namespace cw_experiments_test
