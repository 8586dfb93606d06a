#pragma once
// Shared by the tests that spread a study over processes (tests/test_study_cluster.cpp: GNU parallel, signals;
// tests/test_study_slurm.cpp: a real Slurm): cifar10_fairtat's protocol made tiny on the synthetic set, running a
// command, and comparing two runs' numbers bit for bit.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/test_experiments_util.h"
#include "tests/test_process.h"

namespace cw_cluster_test {

namespace fs = std::filesystem;

// cifar10_fairtat's protocol on the synthetic set, tiny: natural, pgd_at and FRL fine-tuning pgd_at's checkpoint.
inline const std::string kFairtat =
    " --dataset synthetic --arch lenet5 --train-n 100 --eval-n 50 --epoch-eval-n 20 --batch-size 50"
    " --attack-steps 2 --eval-steps 2 --final-attacks pgd20 --val-split first:2 --device cpu"
    " --optimizer adam --lr 0.002";

// `args` without --epochs or --arms: the three arms, two epochs (a flag may be given once). One thread: the sums'
// order is fixed, so every run of a job gives the same bits.
inline std::string fairtat(const std::string& args) {
    const std::string defaults = (args.find("--epochs") == std::string::npos ? " --epochs 2" : "") +
                                 std::string(args.find("--arms") == std::string::npos ? " --arms natural,pgd_at,frl" : "");
    return "env CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " +
           (cw_test::repo_root() / "experiments" / "cifar10_fairtat").string() + kFairtat + defaults + " " + args;
}

// Runs `command` (through /bin/sh -c "exec ..."), its output into `text`; the exit code.
inline int run(const std::string& command, std::string* text = nullptr) {
    cw_test::Spawned p(command);
    const int code = p.finish();
    if (text) *text = p.text;
    UNSCOPED_INFO(command << "\n" << p.text);
    return code;
}

// A results.json's evaluations, bit for bit, except the wall time each evaluation took.
inline std::string evaluations(const fs::path& results) {
    nlohmann::json e = nlohmann::json::parse(cw_experiments_test::read_text(results)).at("evaluations");
    for (auto& x : e) x.erase("time_s");
    return e.dump();
}

// summary.md without its wall time.
inline std::string summary_tables(const fs::path& md) {
    const std::string text = cw_experiments_test::read_text(md);
    return text.substr(0, text.find("\nWall time"));
}

// Every job's final evaluations (per-class accuracies, confusion, mean logits ...) and the summary's tables.
inline void same_results(const fs::path& a, const fs::path& b, const std::vector<std::string>& jobs) {
    for (const std::string& j : jobs)
        for (const char* cp : {"eval_last", "eval_best_fair"}) {
            INFO(j << " " << cp);
            CHECK(evaluations(a / j / cp / "results.json") == evaluations(b / j / cp / "results.json"));
        }
    CHECK(summary_tables(a / "summary.md") == summary_tables(b / "summary.md"));
}

}  // namespace cw_cluster_test
