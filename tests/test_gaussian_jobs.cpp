// experiments/gaussian_theory spread with the study's cluster flags: every trained linear model is a job
// (protocols/gaussian_models.h), the theory tables the summary. --list-jobs, the models run one by one with --job in
// another order give the single-process run's models and theory.csv bit for bit; --summary over some of them lists
// the rest and writes the rows it can; with --seeds a job trains with --seed + k, as a plain run with that --seed.
#include <catch2/catch.hpp>

#include "study/study.h"
#include "tests/test_experiments_util.h"

using namespace cw_experiments_test;

namespace {

const char* kTiny = "--quick --device cpu --m 4 --d 40 --samples 1500 --test-samples 400 --epochs 3 --eps0 0.4";
const char* kSweeps = " --k-sweep 1.5,2 --eps-sweep 0.3,0.5";

Output gaussian(const std::string& args, const std::string& streams = "2>&1") {
    return cw_test::run_shell("env CLASSWISE_THREADS=1 CLASSWISE_GNUPLOT=/nonexistent " +
                              (repo_root() / "experiments" / "gaussian_theory").string() + " " + kTiny + " " + args +
                              " " + streams);
}

// A model's numbers: its evaluations without their wall time, its exact errors, its weights.
std::string model_numbers(const fs::path& dir) {
    nlohmann::json r = contract_results(dir / "results.json");
    for (auto& e : r.at("evaluations")) e.erase("time_s");
    const nlohmann::json m = nlohmann::json::parse(read_text(dir / "model.json"));
    return r.at("evaluations").dump() + r.at("gaussian").dump() + m.at("w").dump() + m.at("b").dump();
}

const std::vector<std::string> kModels = {"K1.5_natural", "K1.5_eps0.5_adversarial", "K2_natural",
                                          "K2_eps0.3_adversarial", "K2_eps0.5_adversarial"};

}  // namespace

TEST_CASE("gaussian jobs: --list-jobs, the models by --job, --summary: the single-process run bit for bit",
          "[gaussian][cluster]") {
    const fs::path one = fresh_dir("cw_gaussian_one"), jobs = fresh_dir("cw_gaussian_jobs");
    const Output full = gaussian("--out " + one.string() + kSweeps);
    INFO(full.text);
    REQUIRE(full.code == 0);
    const Output list = gaussian("--out " + jobs.string() + kSweeps + " --list-jobs", "2>/dev/null");
    REQUIRE(list.code == 0);
    std::string expected;
    for (const std::string& m : kModels) expected += m + "\n";
    REQUIRE(list.text == expected);   // K by K, natural first; all on level 0 (no model needs another)
    REQUIRE(gaussian("--out " + jobs.string() + kSweeps + " --list-jobs --level 1", "2>/dev/null").text.empty());

    // Two models, then --summary: the others listed, only the row whose two models finished.
    for (const std::string id : {"K2_eps0.3_adversarial", "2"}) {   // by id and by index (K2_natural)
        const Output o = gaussian("--out " + jobs.string() + kSweeps + " --job " + id);
        INFO(o.text);
        REQUIRE(o.code == 0);
    }
    const Output partial = gaussian("--out " + jobs.string() + kSweeps + " --summary");
    INFO(partial.text);
    REQUIRE(partial.code == cw::study::kIncompleteExit);
    CHECK(partial.text.find("2 of 5 jobs finished") != std::string::npos);
    CHECK(partial.text.find("  K1.5_natural: not started\n") != std::string::npos);
    CHECK(partial.text.find("sweep K at 2: no row yet (K2_natural and K2_eps0.5_adversarial must both have finished)") !=
          std::string::npos);
    const std::string rows = read_text(jobs / "theory.csv");
    CHECK(line_count(rows) == 2);   // the header and eps 0.3
    CHECK(rows.find("\neps,4,40,1,0.1,1,2,0.3,0.4,") != std::string::npos);

    // The rest in another order than the list's; then the summary equals the single process's.
    for (const std::string id : {"K2_eps0.5_adversarial", "K1.5_eps0.5_adversarial", "K1.5_natural"})
        REQUIRE(gaussian("--out " + jobs.string() + kSweeps + " --job " + id).code == 0);
    const Output sum = gaussian("--out " + jobs.string() + kSweeps + " --summary");
    INFO(sum.text);
    REQUIRE(sum.code == 0);
    CHECK(sum.text.find("Omega (Corollary 1) = 2.77393") != std::string::npos);   // the theorem, G1 with m 4 d 40
    for (const std::string& m : kModels) {
        INFO(m);
        CHECK(model_numbers(one / m) == model_numbers(jobs / m));
    }
    CHECK(read_text(one / "theory.csv") == read_text(jobs / "theory.csv"));
    CHECK(line_count(read_text(jobs / "theory.csv")) == 1 + 2 + 2);
    // A finished model is not trained again: --job and a full run with --resume skip it.
    const Output again = gaussian("--out " + jobs.string() + kSweeps + " --job K2_natural");
    CHECK(again.text.find("K2_natural finished before; skipped") != std::string::npos);
    fs::remove_all(one);
    fs::remove_all(jobs);
}

TEST_CASE("gaussian jobs: --seeds trains every model per seed with --seed + k; --slurm writes one level",
          "[gaussian][cluster]") {
    const fs::path seeded = fresh_dir("cw_gaussian_seeds"), plain = fresh_dir("cw_gaussian_seed3");
    REQUIRE(gaussian("--out " + seeded.string() + " --seeds 0,3 --k-sweep 2 --eps-sweep 0.5").code == 0);
    // --seed 3 alone: the same data and batches as job K2_natural/seed3 (seed 0 + 3).
    REQUIRE(gaussian("--out " + plain.string() + " --seed 3 --k-sweep 2 --eps-sweep 0.5").code == 0);
    for (const std::string m : {"K2_natural", "K2_eps0.5_adversarial"}) {
        INFO(m);
        CHECK(model_numbers(seeded / m / "seed3") == model_numbers(plain / m));
        CHECK(model_numbers(seeded / m / "seed0") != model_numbers(plain / m));
    }
    const std::string csv = read_text(seeded / "theory.csv");   // per seed: its K and eps rows
    CHECK(line_count(csv) == 1 + 4);
    CHECK(csv.find("\nK_seed3,4,40,1,0.1,1,2,0.5,0.4,") != std::string::npos);
    const Output slurm = gaussian("--out " + seeded.string() + " --seeds 0,3 --k-sweep 2 --eps-sweep 0.5 --slurm");
    REQUIRE(slurm.code == 0);
    CHECK(read_text(seeded / "slurm/level0.jobs") ==
          "K2_natural/seed0\nK2_eps0.5_adversarial/seed0\nK2_natural/seed3\nK2_eps0.5_adversarial/seed3\n");
    CHECK(!fs::exists(seeded / "slurm/level1.jobs"));
    fs::remove_all(seeded);
    fs::remove_all(plain);
}
