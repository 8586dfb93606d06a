// scripts/reproduction.sh: every command the study would run is one `train` accepts, with the epochs the protocol
// gives it (5, and 2 for the fine-tunes that start from another arm's model). Each listed command runs here with
// --print-config, which parses every flag and exits. Seen failing on the bug it was written for: the fine-tunes
// carried the dataset's --epochs 5 and their own --epochs 2, which train refuses ("--epochs: At Most 1 required").
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/test_nn_util.h"
#include "tests/test_process.h"

TEST_CASE("reproduction.sh: every study command parses, with the protocol's epochs", "[scripts]") {
    cw_nn_test::ScratchDir dir;
    const std::string root = cw_test::repo_root().string();
    const std::string runs = (dir.path / "runs").string();
    // Every arm, the three beyond the papers too.
    const auto listed = cw_test::run_shell("cd '" + root + "' && OUT='" + runs +
                                           "' ARMS='natural pgd_at trades frl_rwrm frl_rw cfa_at cfa_at_ema cfa_trades "
                                           "fair_tat fair_tat_ema dafa trix faal' scripts/reproduction.sh list study 2>&1");
    INFO(listed.text);
    REQUIRE(listed.code == 0);
    std::istringstream lines(listed.text);
    std::string command;
    int commands = 0, fine_tunes = 0;
    while (std::getline(lines, command)) {
        if (command.empty()) continue;
        ++commands;
        // A fine-tune's hot start must exist for --init to accept it: an empty file stands in for it.
        const size_t init = command.find("--init ");
        if (init != std::string::npos) {
            const std::string file = command.substr(init + 7, command.find(' ', init + 7) - init - 7);
            std::filesystem::create_directories(std::filesystem::path(file).parent_path());
            std::ofstream(file).put('\n');
        }
        const bool fine_tune = command.find("--method frl_") != std::string::npos ||
                               command.find("--method faal") != std::string::npos;
        fine_tunes += fine_tune;
        const auto parsed = cw_test::run_shell("cd '" + root + "' && " + command + " --print-config 2>&1");
        INFO(command << "\n" << parsed.text);
        REQUIRE(parsed.code == 0);
        CHECK(parsed.text.find(fine_tune ? "\nepochs=2\n" : "\nepochs=5\n") != std::string::npos);
    }
    // 2 datasets: PGD-AT and FRL Reweight+Remargin 5 seeds each, the 11 other arms 3 each.
    CHECK(commands == 2 * (2 * 5 + 11 * 3));
    CHECK(fine_tunes == 2 * (5 + 3 + 3));
}
