// seeds: one table over several runs of the same configuration (seeds): per-class accuracy, overall, worst class
// and spread as mean ± std (sample std over the runs), for the clean evaluation and every attack, from each run's
// results.json. Markdown on stdout (and <out>/seeds.md + seeds.json with --out).
//
//   build/tools/seeds runs/fmnist_pgd_s0/eval_last runs/fmnist_pgd_s1/eval_last runs/fmnist_pgd_s2/eval_last
//
// What the seed reports (scripts/*_report.sh) need besides, so that they need no JSON tool of their own:
//   --row [--attack pgd20] [--reference REF...]   one summary row against a reference method's runs (the cells of
//                                                 report::summary_row: clean, worst class, bottom 3, spread, lifts)
//   --method-of RUN_DIR                           the method's description from the run's job.json
//   --best-epochs RUN_DIR...                      the best_robust epoch of each run (selection.json), "?" if none
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/common_flags.h"
#include "util/atomic_file.h"
#include "report/seed_table.h"
#include "util/flags.h"

namespace {

using nlohmann::json;

json read_json(const std::filesystem::path& p) {
    try {
        return json::parse(cw::util::read_file_text(p.string()));
    } catch (const json::exception& e) {
        throw std::runtime_error(p.string() + ": not JSON (" + e.what() + ")");
    }
}

std::string method_of(const std::string& run_dir) {
    const json job = read_json(std::filesystem::path(run_dir) / "job.json");
    if (!job.contains("method") || !job["method"].is_string())
        throw std::runtime_error(run_dir + "/job.json: no method description");
    return job["method"];
}

// "2,1,?": a run without selection.json (or without a best_robust entry) is "?".
std::string best_epochs(const std::vector<std::string>& run_dirs) {
    std::string out;
    for (const auto& d : run_dirs) {
        const auto p = std::filesystem::path(d) / "selection.json";
        std::string e = "?";
        if (std::filesystem::exists(p)) {
            const json s = read_json(p);
            if (s.contains("best") && s["best"].contains("robust") && s["best"]["robust"].contains("epoch"))
                e = s["best"]["robust"]["epoch"].dump();
        }
        out += (out.empty() ? "" : ",") + e;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cw;
    std::vector<std::string> runs, reference, best_epoch_runs;
    std::string attack = "pgd20", method_run;
    bool row = false;
    cli::CommonFlags common;
    common.out = "";
    cli::CommonSpec spec;
    spec.program = "seeds";
    spec.epochs_help = "accepted for a uniform command line; ignored";
    spec.resume_help = "accepted for a uniform command line; ignored";
    cli::FlagSet app{"Mean ± std over runs (seeds) of per-class, overall, worst-class accuracy and spread", "seeds"};
    cli::add_common_flags(app, common, spec);
    app.option("runs", runs, "results.json files or the folders holding them (one per seed)");
    app.flag("--row", row, "print one summary row instead of the table: clean, clean worst, the attack, its worst "
                               "class, bottom 3 and spread, and the lifts over --reference");
    app.option("--attack", attack, "the attack of --row (default pgd20)");
    app.option("--reference", reference, "with --row: the reference method's runs (results.json or folders)");
    app.option("--method-of", method_run, "print the method description of this run folder's job.json and exit");
    app.option("--best-epochs", best_epoch_runs,
               "print the best_robust epochs of these run folders (selection.json), comma-separated, and exit");
    if (const int code = cli::parse(app, argc, argv, common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("seeds", [&] {
        if (!method_run.empty()) {
            std::cout << method_of(method_run) << "\n";
            return 0;
        }
        if (!best_epoch_runs.empty()) {
            std::cout << best_epochs(best_epoch_runs) << "\n";
            return 0;
        }
        const report::SeedRuns seeds = report::load_seed_runs(runs);
        if (row) {
            if (reference.empty()) {
                std::cout << report::summary_row(seeds, nullptr, attack) << "\n";
            } else {
                const report::SeedRuns ref = report::load_seed_runs(reference);
                std::cout << report::summary_row(seeds, &ref, attack) << "\n";
            }
            return 0;
        }
        json summary;
        const std::string md = report::seed_table(seeds, summary);
        std::cout << md;
        if (!common.out.empty()) {
            util::write_file_atomic((std::filesystem::path(common.out) / "seeds.md").string(), md);
            summary["runs"] = runs;
            util::write_file_atomic((std::filesystem::path(common.out) / "seeds.json").string(), summary.dump(2) + "\n");
        }
        return 0;
    });
}
