// benz_features on a real one-node Slurm (tests/test_slurm_one_node.h): the scripts --slurm writes chain the
// feature-set constructions between the source models and the training on the sets (three job arrays, each afterok
// on the one before), and what the jobs wrote equals the single-process run bit for bit. Skips (counted) where Slurm
// cannot run, as tests/test_study_slurm.cpp does.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "nn/safetensors.h"
#include "tests/test_benz_features_flags.h"
#include "tests/test_slurm_one_node.h"

namespace fs = std::filesystem;
using namespace cw_experiments_test;
using namespace cw_slurm_test;

namespace {

// The tiny synthetic protocol (tests/test_benz_features_flags.h); one thread, no figures.
std::string features(const std::string& args) {
    return "env CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " +
           (repo_root() / "experiments" / "benz_features").string() +
           " " + std::string(cw_experiments_test::kBenzFeaturesTiny) + " " + args + " 2>&1";
}

std::string evaluations(const fs::path& results) {
    nlohmann::json e = contract_results(results).at("evaluations");
    for (auto& x : e) x.erase("time_s");
    return e.dump();
}

}  // namespace

TEST_CASE("benz_features on Slurm: sources, then the constructions, then the training on the sets, bit for bit",
          "[benz_features][cluster][slurm]") {
    OneNodeSlurm slurm("cw_slurm_features");
    CW_SKIP_WITHOUT_SLURM(slurm);
    const fs::path one = fresh_dir("cw_slurm_features_one"), out = fresh_dir("cw_slurm_features_jobs");
    const Output single = cw_test::run_shell(features("--out " + one.string()));
    INFO(single.text);
    REQUIRE(single.code == 0);
    const Output written = cw_test::run_shell(features("--out " + out.string() +
                                                       " --slurm --slurm-gpus 0 --slurm-cpus 1 --slurm-time 0:10:00"));
    INFO(written.text);
    REQUIRE(written.code == 0);
    const Output submitted = cw_test::run_shell(slurm.env() + "CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " +
                                                submit_command(written.text) + " 2>&1");
    INFO(submitted.text);
    REQUIRE(submitted.code == 0);
    const Submitted ids = submitted_ids(submitted.text);
    REQUIRE(ids.levels.size() == 3);

    const fs::path scripts = out / "slurm";
    const bool ended = slurm.wait_all_ended(240);
    INFO("squeue -t all:\n" << cw_test::run_shell(slurm.env() + "squeue -t all 2>&1").text);
    INFO("summary.log:\n" << text_or_missing(scripts / "summary.log"));
    REQUIRE(ended);
    const auto jobs = slurm.jobs();
    // Level 1 holds the constructions (and original, after its unchanged set): each started only after level 0
    // succeeded, and level 2 only after them — the node has eight CPUs, so a missing afterok would start them at once
    // and fail on missing inputs.
    const std::vector<std::vector<std::string>> levels = {
        {"sources/natural", "sources/pgd_at", "feature_sets/original"},
        {"feature_sets/robust", "feature_sets/nonrobust", "original"},
        {"robust_set", "nonrobust_set"}};
    for (size_t l = 0; l < levels.size(); ++l)
        for (size_t t = 0; t < levels[l].size(); ++t) {
            INFO(levels[l][t]);
            CHECK(state_of(jobs, ids.levels[l] + "_" + std::to_string(t)) ==
                  "level" + std::to_string(l) + " COMPLETED");
            CHECK(text_or_missing(scripts / ("level" + std::to_string(l) + "_" + std::to_string(t) + ".log"))
                      .find(levels[l][t] + " (") != std::string::npos);
        }
    CHECK(state_of(jobs, ids.summary) == "summary COMPLETED");
    CHECK(read_text(scripts / "summary.log").find("8 of 8 jobs finished") != std::string::npos);
    for (const std::string set : {"robust", "nonrobust"}) {
        INFO(set);
        const auto a = cw::st::read_file((one / "feature_sets" / set / "set.safetensors").string());
        const auto b = cw::st::read_file((out / "feature_sets" / set / "set.safetensors").string());
        CHECK(a.tensors.at("images").bytes == b.tensors.at("images").bytes);
    }
    for (const std::string arm : {"sources/natural", "sources/pgd_at", "original", "robust_set", "nonrobust_set"}) {
        INFO(arm);
        CHECK(evaluations(one / arm / "eval_last/results.json") == evaluations(out / arm / "eval_last/results.json"));
    }
    CHECK(read_text(one / "per_class.csv") == read_text(out / "per_class.csv"));   // the summary job's table
    fs::remove_all(one);
    fs::remove_all(out);
}
