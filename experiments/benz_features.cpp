// benz_features — Benz et al. §3.2 with Ilyas et al. (NeurIPS 2019, §3.1, App. C): robust and non-robust feature
// datasets, and what a model trained naturally on each of them learns, class by class.
//
// Protocol (the paper's values in one visible block below; every value is a flag), one study whose jobs are every
// step, so --list-jobs, --job, --summary, --slurm and --seeds spread it like every experiment binary
// (docs/cluster.md):
//   1. the source models: the dataset's model trained naturally and with PGD-AT (Madry et al.), jobs
//      sources/natural and sources/pgd_at (level 0) — or given with --natural-weights / --robust-weights (nothing
//      trains then);
//   2. the feature datasets (protocols/feature_datasets.h, protocols/feature_set_jobs.h): for every training pair
//      (x, y), from a different random training image, 1000 normalised-gradient L2 steps of 0.1 towards g(x), g
//      the source's representation (the input of its last linear layer), label y kept: D_R from the robust source
//      (job feature_sets/robust, after sources/pgd_at), D_NR from the natural one (feature_sets/nonrobust, after
//      sources/natural), and the same training images unchanged as the reference (feature_sets/original);
//   3. a fresh model trained naturally on each (jobs original, robust_set, nonrobust_set, each after its set;
//      train --train-file), for --set-epochs (the sets are smaller than the sources' data: an under-trained natural
//      model keeps spurious robustness at ε = 0.1, which would hide the D_R / original contrast);
//   4. each one's per-class clean and PGD-20 accuracy on the real test set: summary.md, compare.html (the sources
//      beside them) and features_table.md (with the sources' columns and the constructions' feature losses).
// Ilyas et al.'s result: the D_R model keeps non-trivial robust accuracy; the D_NR model reaches good clean accuracy
// with near-zero robust accuracy.
//
//   ./experiments/benz_features [--quick] [--dataset fashion-mnist|mnist|cifar10] [--feature-n N]
//       [--feature-steps 1000] [--feature-step-size 0.1] [--set-epochs E] [--natural-weights F --robust-weights F]
//       [--resume]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "datasets/registry.h"
#include "engine/device.h"
#include "protocols/argv_peek.h"
#include "protocols/class_columns.h"
#include "protocols/feature_set_jobs.h"
#include "report/run_data.h"
#include "study/study.h"
#include "util/atomic_file.h"
#include "util/flags.h"

namespace fs = std::filesystem;
using namespace cw;

namespace {

std::string fmt_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// The three sets and the arm trained on each.
const std::vector<std::pair<std::string, std::string>> kSets = {
    {"original", "original"}, {"robust", "robust_set"}, {"nonrobust", "nonrobust_set"}};

// Every step as a job: sources (unless given), constructions after their source, training after its set.
study::Study features_study(const train::JobConfig& base, const std::string& arch, int set_epochs,
                            const protocols::FeatureSetSpec& spec, const std::string& natural_weights,
                            const std::string& robust_weights) {
    study::Study s;
    s.title = base.data.dataset + ", " + arch + ": natural training on the original, robust (D_R) and non-robust "
              "(D_NR) sets, beside their source models";
    s.attack = "pgd20";
    if (natural_weights.empty()) s.arms.push_back(study::arm("sources/natural", base, "natural"));
    if (robust_weights.empty()) s.arms.push_back(study::arm("sources/pgd_at", base, "pgd_at"));
    study::Arm original;
    original.name = "feature_sets/original";
    original.work = protocols::original_set_work(spec);
    s.arms.push_back(original);
    for (const auto& [set, source, weights, flag] :
         {std::tuple{"robust", "sources/pgd_at", robust_weights, "--robust-weights"},
          {"nonrobust", "sources/natural", natural_weights, "--natural-weights"}}) {
        study::Arm a;
        a.name = std::string("feature_sets/") + set;
        a.work = protocols::feature_set_work(spec, source, weights, flag);
        if (weights.empty()) a.needs = {source};
        s.arms.push_back(a);
    }
    train::JobConfig set_job = base;
    set_job.data.train_n = 0;   // the file holds exactly the chosen images
    for (const auto& [set, arm_name] : kSets) {
        study::Arm a = study::arm(arm_name, set_job, "natural");
        if (set_epochs > 0) a.job.common.epochs = set_epochs;
        const std::string construction = "feature_sets/" + set;
        a.needs = {construction};
        a.use_inputs = [construction](train::JobConfig& job, const std::map<std::string, std::string>& inputs) {
            job.data.train_file = protocols::set_file(inputs.at(construction));
        };
        s.arms.push_back(a);
    }
    return s;
}

// features_table.md and per_class.csv: every set's arm and every trained source, clean and PGD-20 per class, and
// the constructions' feature losses; with --seeds one block of columns per seed.
void write_features_table(const study::Study& s, const std::vector<study::StudyJob>& jobs, const fs::path& out) {
    std::vector<std::optional<uint64_t>> seeds;
    for (const study::StudyJob& j : jobs)
        if (std::find(seeds.begin(), seeds.end(), j.seed) == seeds.end()) seeds.push_back(j.seed);
    auto dir_of = [&](const std::string& arm, const std::optional<uint64_t>& seed) -> std::optional<std::string> {
        for (const study::StudyJob& j : jobs)
            if (s.arms[j.arm].name == arm && j.seed == seed) return j.dir;
        return std::nullopt;
    };
    std::vector<protocols::ClassColumn> columns;
    std::vector<std::string> classes;
    std::string construction = "| set | images | steps | step | start | final | final, 8-bit |\n|---|---|---|---|---|---|---|\n";
    for (const auto& seed : seeds) {
        const std::string prefix = seed ? "seed " + std::to_string(*seed) + " " : "";
        std::vector<std::pair<std::string, std::string>> results;
        for (const auto& [set, arm_name] : kSets) results.push_back({arm_name, *dir_of(arm_name, seed)});
        for (const char* source : {"natural", "pgd_at"})
            if (const auto dir = dir_of(std::string("sources/") + source, seed))
                results.push_back({std::string("source ") + source, *dir});
        for (const auto& [label, dir] : results) {
            const std::string file = (fs::path(dir) / "eval_last/results.json").string();
            const nlohmann::json r = report::load_results_json(file);
            classes = r.at("classes").get<std::vector<std::string>>();
            columns.push_back(protocols::class_column(prefix + label + " clean", r, "clean", file));
            columns.push_back(protocols::class_column(prefix + label + " PGD-20", r, "pgd20", file));
        }
        for (const char* set : {"robust", "nonrobust"}) {
            const fs::path file = fs::path(*dir_of(std::string("feature_sets/") + set, seed)) / "construction.json";
            const nlohmann::json l = nlohmann::json::parse(util::read_file_text(file.string()));
            construction += "| " + prefix + set + " | " + std::to_string(l.at("images").get<int64_t>()) + " | " +
                            std::to_string(l.at("steps").get<int64_t>()) + " | " +
                            fmt_number(l.at("step_size").get<double>()) + " | " +
                            fmt_number(l.at("mean_start_loss").get<double>()) + " | " +
                            fmt_number(l.at("mean_final_loss").get<double>()) + " | " +
                            fmt_number(l.at("mean_final_loss_8bit").get<double>()) + " |\n";
        }
    }
    const std::string md = "# " + s.title + "\n\nLast checkpoint; accuracies in %; PGD-20 (L∞, α = ε/4, one random "
                           "start) on the real test set.\n\n## Construction (mean ||g(x_r) − g(x)||_2 over each set)\n\n" +
                           construction + "\n## Average, worst and best class\n\n" +
                           protocols::extremes_markdown(classes, columns) + "\n## Every class\n\n" +
                           protocols::per_class_markdown(classes, columns);
    util::write_file_atomic((out / "features_table.md").string(), md);
    util::write_file_atomic((out / "per_class.csv").string(), protocols::per_class_csv(classes, columns));
    std::cout << "\n" << md << "\nwrote " << (out / "features_table.md").string() << " and "
              << (out / "per_class.csv").string() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    const std::string dataset = protocols::peek_flag(argc, argv, "--dataset", "fashion-mnist");
    // ---- the paper's setting (every value is a flag) ---------------------------------------------------------
    train::JobConfig base;
    base.experiment = "benz_features";
    base.common.out = "runs/benz_features";
    base.data.dataset = dataset;
    base.final_attacks = "pgd20";          // PGD-20, α = ε/4, one random start (the project's robust column)
    base.final_checkpoints = "last";
    base.common.epochs = 10;
    if (dataset == "cifar10") {
        base.arch = "preact_resnet18";     // Ilyas et al.: ResNet-50; ε 8/255 L∞ here (they: L2 0.5)
        base.eps = "8/255";
        base.common.epochs = 100;
    }
    protocols::FeatureSetSpec sets;
    sets.dataset = dataset;
    protocols::FeatureSetOptions& fo = sets.options;
    fo.steps = 1000;                       // Ilyas et al. App. C
    fo.step_size = 0.1f;                   // L2 step per image
    fo.batch_size = 250;
    int64_t& feature_n = sets.images;      // images per feature set (0: the whole training split)
    int set_epochs = 0;                    // epochs of the models trained on the sets (0: --epochs)
    std::string natural_weights, robust_weights;
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "benz_features";
    spec.epochs_help = "training epochs of every model (the two sources and the three trained on the sets)";
    spec.quick_preset = {{"--train-n", "6000"},   {"--epochs", "4"},          {"--batch-size", "64"},
                         {"--feature-n", "2000"}, {"--feature-steps", "200"}, {"--set-epochs", "12"},
                         {"--attack-steps", "7"}, {"--eval-n", "1000"},       {"--epoch-eval-n", "200"},
                         {"--out", "runs/benz_features_quick"}};
    spec.quick_what = "sources on 6,000 real images (4 epochs), 2,000-image feature sets with 200 steps, 12 epochs on each set, "
                      "1,000 test images (about 13 minutes on two cores)";
    cli::FlagSet app{"classwise benz_features: robust and non-robust feature datasets (Ilyas et al.), per class", "benz_features"};
    study::StudyFlags study_flags;
    // The paper's settings for these flags, shown by --help and --print-config.
    study::add_experiment_flags(app, base, spec, study_flags, {"--arch", "--eps"});
    app.remove("--method");
    app.remove("--train-file");
    app.option("--feature-n", feature_n, "images per feature set: the first N/C of every class (0: the whole training split)")
        .range(int64_t{0}, int64_t{100000000}).show_default();
    app.option("--set-epochs", set_epochs, "epochs of the three models trained on the sets (0: --epochs); they see "
                                               "fewer images than the sources, and an undertrained reference is "
                                               "spuriously robust")
        .range(0, 1000000).show_default();
    app.option("--feature-steps", fo.steps, "L2 descent steps of the construction (Ilyas et al.: 1000)")
        .range(int64_t{0}, int64_t{1000000}).show_default();
    app.option("--feature-step-size", fo.step_size, "L2 length of every step (Ilyas et al.: 0.1)")
        .range(1e-6f, 1e3f).show_default();
    app.option("--feature-batch-size", fo.batch_size, "images per construction batch")
        .range(int64_t{1}, int64_t{1000000}).show_default();
    app.option("--natural-weights", natural_weights, "use this natural model as the D_NR source instead of training one")
        .existing_file();
    app.option("--robust-weights", robust_weights, "use this robust model as the D_R source instead of training one")
        .existing_file();
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("benz_features", [&]() -> int {
        const std::string arch = base.arch.empty() ? train::default_arch(dataset) : base.arch;
        // Given source weights are checked now, not after the other source has trained for an hour.
        if (!natural_weights.empty() || !robust_weights.empty()) {
            const data::Dataset train = data::load_dataset(dataset, "train", base.common.data_dir);
            if (!natural_weights.empty()) protocols::source_model("--natural-weights", natural_weights, train, Device::cpu());
            if (!robust_weights.empty()) protocols::source_model("--robust-weights", robust_weights, train, Device::cpu());
        }
        const study::Study s = features_study(base, arch, set_epochs, sets, natural_weights, robust_weights);
        if (const int code = study::run_study(s, base.common, std::cout, study_flags); code != 0) return code;
        // Every job has finished (a full run, or --summary with nothing missing): the table.
        write_features_table(s, study::study_jobs(s, base.common.out, study::parse_seeds(study_flags.seeds)),
                             base.common.out);
        return 0;
    });
}
