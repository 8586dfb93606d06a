// experiments/benz_features spread with the study's cluster flags: the construction of each feature dataset is a
// job (protocols/feature_set_jobs.h) after its source model's job and before the training on its set. Here: the
// levels --list-jobs gives and --slurm chains with afterok, the one-line refusals of a construction before its
// source and a training before its construction, and every job run by --job level by level giving the
// single-process run's sets and per-class numbers bit for bit (the synthetic set, --quick made tiny).
#include <catch2/catch.hpp>

#include <sstream>

#include "nn/safetensors.h"
#include "study/study.h"
#include "tests/test_benz_features_flags.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

namespace {

const char* kTiny = kBenzFeaturesTiny;

// One engine thread: separate processes sum in one order, so they agree bit for bit.
Output features(const std::string& args, const std::string& streams = "2>&1") {
    return cw_test::run_shell("env CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " +
                              (repo_root() / "experiments" / "benz_features").string() + " " + kTiny + " " + args +
                              " " + streams);
}

std::string evaluations(const fs::path& results) {
    nlohmann::json e = contract_results(results).at("evaluations");
    for (auto& x : e) x.erase("time_s");
    return e.dump();
}

// A set's tensors (the metadata names the source's path, which differs between two output folders).
std::string set_tensors(const fs::path& file) {
    std::string bytes;
    for (const auto& [name, t] : cw::st::read_file(file.string()).tensors)
        bytes += name + ":" + std::string(t.bytes.begin(), t.bytes.end());
    return bytes;
}

}  // namespace

TEST_CASE("benz_features jobs: constructions between their sources and their training, in levels, refused early",
          "[benz_features][cluster]") {
    const fs::path out = fresh_dir("cw_benz_features_levels");
    const std::string o = " --out " + out.string();
    const std::vector<std::string> levels = {
        "sources/natural\nsources/pgd_at\nfeature_sets/original\n",
        "feature_sets/robust\nfeature_sets/nonrobust\noriginal\n",
        "robust_set\nnonrobust_set\n",
        ""};
    for (size_t l = 0; l < levels.size(); ++l) {
        INFO("level " << l);
        const Output list = features(o + " --list-jobs --level " + std::to_string(l), "2>/dev/null");
        REQUIRE(list.code == 0);
        CHECK(list.text == levels[l]);
    }
    // Unfinished inputs: at once, one line naming them, nothing written.
    const Output construction = features(o + " --job feature_sets/robust", "2>&1 >/dev/null");
    CHECK(construction.code == 1);
    CHECK(construction.text ==
          "benz_features: job feature_sets/robust needs sources/pgd_at finished first (not finished yet)\n");
    const Output training = features(o + " --job nonrobust_set", "2>&1 >/dev/null");
    CHECK(training.code == 1);
    CHECK(training.text ==
          "benz_features: job nonrobust_set needs feature_sets/nonrobust finished first (not finished yet)\n");
    CHECK(!fs::exists(out / "feature_sets"));

    // --slurm: one array per level, each level afterok on the one before.
    REQUIRE(features(o + " --seeds 0,1 --slurm --slurm-gpus 0").code == 0);
    CHECK(read_text(out / "slurm/level1.jobs") ==
          "feature_sets/robust/seed0\nfeature_sets/nonrobust/seed0\noriginal/seed0\n"
          "feature_sets/robust/seed1\nfeature_sets/nonrobust/seed1\noriginal/seed1\n");
    CHECK(read_text(out / "slurm/level2.jobs") == "robust_set/seed0\nnonrobust_set/seed0\nrobust_set/seed1\nnonrobust_set/seed1\n");
    const std::string submit = read_text(out / "slurm/submit.sh");
    CHECK(submit.find("j1=$(sbatch --parsable --kill-on-invalid-dep=yes --dependency=afterok:$j0 ") != std::string::npos);
    CHECK(submit.find("j2=$(sbatch --parsable --kill-on-invalid-dep=yes --dependency=afterok:$j1 ") != std::string::npos);
    fs::remove_all(out);
}

TEST_CASE("benz_features jobs: every job by --job, level by level, is the single-process run bit for bit",
          "[benz_features][cluster]") {
    const fs::path one = fresh_dir("cw_benz_features_one"), jobs = fresh_dir("cw_benz_features_jobs");
    const Output full = features("--out " + one.string());
    INFO(full.text);
    REQUIRE(full.code == 0);
    for (int level = 0; level < 3; ++level) {
        const Output list = features("--out " + jobs.string() + " --list-jobs --level " + std::to_string(level),
                                     "2>/dev/null");
        REQUIRE(list.code == 0);
        std::istringstream ids(list.text);
        for (std::string id; std::getline(ids, id);) {
            const Output o = features("--out " + jobs.string() + " --job " + id);
            INFO(id << "\n" << o.text);
            REQUIRE(o.code == 0);
        }
    }
    for (const std::string set : {"original", "robust", "nonrobust"}) {
        INFO(set);
        CHECK(set_tensors(one / "feature_sets" / set / "set.safetensors") ==
              set_tensors(jobs / "feature_sets" / set / "set.safetensors"));
    }
    for (const std::string arm : {"sources/natural", "sources/pgd_at", "original", "robust_set", "nonrobust_set"}) {
        INFO(arm);
        CHECK(evaluations(one / arm / "eval_last/results.json") == evaluations(jobs / arm / "eval_last/results.json"));
    }
    // --summary over the finished jobs: the single process's table of every class.
    const Output sum = features("--out " + jobs.string() + " --summary");
    INFO(sum.text);
    REQUIRE(sum.code == 0);
    CHECK(sum.text.find("8 of 8 jobs finished") != std::string::npos);
    CHECK(read_text(one / "per_class.csv") == read_text(jobs / "per_class.csv"));
    // A given natural source: its construction needs nothing and moves to level 0.
    const Output given = features("--out " + jobs.string() + " --list-jobs --level 0 --natural-weights " +
                                  (one / "sources/natural/last.safetensors").string(), "2>/dev/null");
    REQUIRE(given.code == 0);
    CHECK(given.text == "sources/pgd_at\nfeature_sets/original\nfeature_sets/nonrobust\n");
    fs::remove_all(one);
    fs::remove_all(jobs);
}
