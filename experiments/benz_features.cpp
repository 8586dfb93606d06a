// benz_features — Benz et al. §3.2 with Ilyas et al. (NeurIPS 2019, §3.1, App. C): robust and non-robust feature
// datasets, and what a model trained naturally on each of them learns, class by class.
//
// Protocol (the paper's values in one visible block below; every value is a flag):
//   1. the source models: the dataset's model trained naturally and with PGD-AT (Madry et al.), arms of a study in
//      <out>/sources/ — or given with --natural-weights / --robust-weights (nothing trains then);
//   2. the feature datasets (protocols/feature_datasets.h): for every training pair (x, y), from a different random
//      training image, 1000 normalised-gradient L2 steps of 0.1 towards g(x), g the source's representation (the
//      input of its last linear layer), label y kept: D_R from the robust source, D_NR from the natural one, and the
//      same training images unchanged as the reference, in <out>/feature_sets/*.safetensors;
//   3. a fresh model trained naturally on each (arms original, robust_set, nonrobust_set; train --train-file), for
//      --set-epochs (the sets are smaller than the sources' data: an under-trained natural model keeps spurious
//      robustness at ε = 0.1, which would hide the D_R / original contrast);
//   4. each one's per-class clean and PGD-20 accuracy on the real test set: summary.md, compare.html and
//      features_table.md (with the sources' columns and the constructions' feature losses).
// Ilyas et al.'s result: the D_R model keeps non-trivial robust accuracy; the D_NR model reaches good clean accuracy
// with near-zero robust accuracy.
//
//   ./experiments/benz_features [--quick] [--dataset fashion-mnist|mnist|cifar10] [--feature-n N]
//       [--feature-steps 1000] [--feature-step-size 0.1] [--set-epochs E] [--natural-weights F --robust-weights F]
//       [--resume]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "datasets/registry.h"
#include "engine/device.h"
#include "datasets/splits.h"
#include "util/atomic_file.h"
#include "jobs/audit.h"
#include "nn/checkpoint.h"
#include "nn/safetensors.h"
#include "protocols/argv_peek.h"
#include "protocols/class_columns.h"
#include "protocols/feature_datasets.h"
#include "report/run_data.h"
#include "study/study.h"
#include "train/stop_signal.h"

namespace fs = std::filesystem;
using namespace cw;

namespace {

std::string fmt_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// The first ⌈n / C⌉ training images of every class (all of them for n = 0), in dataset order.
std::vector<int64_t> feature_indices(const data::Dataset& train, int64_t n) {
    if (n <= 0) {
        std::vector<int64_t> all(static_cast<size_t>(train.size()));
        for (int64_t i = 0; i < train.size(); ++i) all[static_cast<size_t>(i)] = i;
        return all;
    }
    const int64_t per_class = (n + train.num_classes() - 1) / train.num_classes();
    std::vector<int64_t> idx = data::split_first_k_per_class(train.labels, train.num_classes(), per_class).val;
    std::sort(idx.begin(), idx.end());
    return idx;
}

// The reference arm's images: the same training images, unchanged, in the feature sets' format.
void write_original(const data::Dataset& train, const std::vector<int64_t>& idx, const std::string& path) {
    std::vector<float> px;
    std::vector<int32_t> labels;
    px.reserve(idx.size() * static_cast<size_t>(train.image_bytes()));
    for (int64_t i : idx) {
        const uint8_t* p = train.image(i);
        for (int64_t j = 0; j < train.image_bytes(); ++j) px.push_back(p[j] / 255.f);
        labels.push_back(train.labels[static_cast<size_t>(i)]);
    }
    st::File f;
    f.tensors["images"] = st::from_f32(px, {static_cast<int64_t>(idx.size()), train.channels, train.height, train.width});
    f.tensors["labels"] = st::from_i32(labels, {static_cast<int64_t>(labels.size())});
    f.metadata["dataset"] = train.name;
    st::write_file(path, f);
}

// A source checkpoint, checked against the training images before the first forward (a mismatch would otherwise
// surface deep inside an op).
std::shared_ptr<nn::Classifier> source_model(const std::string& flag, const std::string& file, const data::Dataset& train,
                                             Device device) {
    nn::LoadedModel m;
    try {
        m = nn::load_model_from_checkpoint(file);
    } catch (const std::exception& e) {
        throw std::invalid_argument(flag + " " + file + ": " + e.what());
    }
    auto c = std::dynamic_pointer_cast<nn::Classifier>(m.model);
    if (!c || !c->has_features())
        throw std::invalid_argument(flag + " " + file + ": architecture " + m.spec.arch +
                                    " has no representation accessor (small_cnn, lenet5, mnist_wong, preact_resnet*, resnet*, wrn*)");
    const std::string geometry = nn::input_geometry_mismatch(m.spec.arch, m.spec.config, train.name, train.channels,
                                                             train.height, train.width);
    if (!geometry.empty()) throw std::invalid_argument(flag + " " + file + ": " + geometry);
    if (m.spec.config.num_classes != train.num_classes())
        throw std::invalid_argument(flag + " " + file + ": the model has " + std::to_string(m.spec.config.num_classes) +
                                    " classes, " + train.name + " " + std::to_string(train.num_classes()));
    c->to(device);
    c->eval();
    return c;
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
    protocols::FeatureSetOptions fo;
    fo.steps = 1000;                       // Ilyas et al. App. C
    fo.step_size = 0.1f;                   // L2 step per image
    fo.batch_size = 250;
    int64_t feature_n = 0;                 // images per feature set (0: the whole training split)
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
    CLI::App app{"classwise benz_features: robust and non-robust feature datasets (Ilyas et al.), per class", "benz_features"};
    cli::add_common_flags(app, base.common, spec);
    study::StudyFlags study_flags;
    study::add_study_flags(app, study_flags);
    train::add_job_flags(app, base);
    app.get_option("--arch")->capture_default_str();
    app.get_option("--eps")->capture_default_str();
    app.remove_option(app.get_option("--method"));
    app.remove_option(app.get_option("--train-file"));
    app.add_option("--feature-n", feature_n, "images per feature set: the first N/C of every class (0: the whole training split)")
        ->check(CLI::Range(int64_t{0}, int64_t{100000000}))->capture_default_str();
    app.add_option("--set-epochs", set_epochs, "epochs of the three models trained on the sets (0: --epochs); they see "
                                               "fewer images than the sources, and an undertrained reference is "
                                               "spuriously robust")
        ->check(CLI::Range(0, 1000000))->capture_default_str();
    app.add_option("--feature-steps", fo.steps, "L2 descent steps of the construction (Ilyas et al.: 1000)")
        ->check(CLI::Range(int64_t{0}, int64_t{1000000}))->capture_default_str();
    app.add_option("--feature-step-size", fo.step_size, "L2 length of every step (Ilyas et al.: 0.1)")
        ->check(CLI::Range(1e-6f, 1e3f))->capture_default_str();
    app.add_option("--feature-batch-size", fo.batch_size, "images per construction batch")
        ->check(CLI::Range(int64_t{1}, int64_t{1000000}))->capture_default_str();
    app.add_option("--natural-weights", natural_weights, "use this natural model as the D_NR source instead of training one")
        ->check(CLI::ExistingFile);
    app.add_option("--robust-weights", robust_weights, "use this robust model as the D_R source instead of training one")
        ->check(CLI::ExistingFile);
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("benz_features", [&]() -> int {
        const fs::path out = base.common.out;
        const std::string arch = base.arch.empty() ? train::default_arch(dataset) : base.arch;
        const Device device = resolve_device(base.common.device, false);
        const data::Dataset train = data::load_dataset(dataset, "train", base.common.data_dir);
        // Given source weights are checked now, not after the other source has trained for an hour.
        if (!natural_weights.empty()) source_model("--natural-weights", natural_weights, train, Device::cpu());
        if (!robust_weights.empty()) source_model("--robust-weights", robust_weights, train, Device::cpu());

        // ---- 1. the source models ------------------------------------------------------------------------------
        study::Study sources;
        sources.title = dataset + ", " + arch + ": the source models of the feature datasets";
        sources.attack = "pgd20";
        if (natural_weights.empty()) sources.arms.push_back(study::arm("natural", base, "natural"));
        if (robust_weights.empty()) sources.arms.push_back(study::arm("pgd_at", base, "pgd_at"));
        cli::CommonFlags source_common = base.common;
        source_common.out = (out / "sources").string();
        if (!sources.arms.empty()) {
            std::cout << "== 1. source models into " << source_common.out << "\n";
            if (const int code = study::run_study(sources, source_common, std::cout, study_flags); code != 0) return code;
        }
        if (natural_weights.empty()) natural_weights = source_common.out + "/natural/last.safetensors";
        if (robust_weights.empty()) robust_weights = source_common.out + "/pgd_at/last.safetensors";

        // ---- 2. the feature datasets ---------------------------------------------------------------------------
        const std::vector<int64_t> idx = feature_indices(train, feature_n);
        const fs::path sets = out / "feature_sets";
        fs::create_directories(sets);
        const std::string original = (sets / "original.safetensors").string();
        write_original(train, idx, original);
        fo.seed = base.common.seed;
        fo.resume = base.common.resume;
        fo.log = &std::cout;
        nlohmann::json losses = nlohmann::json::object();
        const std::vector<std::pair<std::string, std::string>> builds = {{"robust", robust_weights}, {"nonrobust", natural_weights}};
        for (const auto& [name, weights] : builds) {
            const std::string flag = name == "robust" ? "--robust-weights" : "--natural-weights";
            std::cout << "== 2. " << (name == "robust" ? "D_R" : "D_NR") << " from " << weights << ": " << idx.size()
                      << " images, " << fo.steps << " steps of " << fmt_number(fo.step_size) << "\n";
            auto model = source_model(flag, weights, train, device);
            fo.source = weights;
            const auto s = protocols::build_feature_dataset(*model, train, idx, (sets / (name + ".safetensors")).string(), fo);
            if (!s.finished) return train::stop_requested() == SIGTERM ? 143 : 130;
            losses[name] = {{"source", weights},         {"images", s.images},           {"steps", fo.steps},
                            {"step_size", fo.step_size}, {"mean_start_loss", s.start_loss}, {"mean_final_loss", s.final_loss},
                            {"mean_final_loss_8bit", s.final_loss_u8}, {"seconds", s.seconds}};
        }
        util::write_file_atomic((sets / "construction.json").string(), losses.dump(2) + "\n");

        // ---- 3. natural training on each set; 4. per-class evaluation --------------------------------------------
        study::Study s;
        s.title = dataset + ", " + arch + ": natural training on the original, robust (D_R) and non-robust (D_NR) sets";
        s.attack = "pgd20";
        train::JobConfig set_job = base;
        set_job.data.train_n = 0;   // the file holds exactly the chosen images
        for (const auto& [arm_name, file] : std::vector<std::pair<std::string, std::string>>{
                 {"original", original}, {"robust_set", (sets / "robust.safetensors").string()},
                 {"nonrobust_set", (sets / "nonrobust.safetensors").string()}}) {
            study::Arm a = study::arm(arm_name, set_job, "natural");
            a.job.data.train_file = file;
            if (set_epochs > 0) a.job.common.epochs = set_epochs;
            s.arms.push_back(a);
        }
        std::cout << "== 3. natural training on each set into " << out.string() << "\n";
        if (const int code = study::run_study(s, base.common, std::cout, study_flags); code != 0) return code;

        std::vector<protocols::ClassColumn> columns;
        std::vector<std::string> classes;
        std::vector<std::pair<std::string, std::string>> results;
        for (const auto& a : s.arms) results.push_back({a.name, (out / a.name / "eval_last/results.json").string()});
        for (const auto& a : sources.arms)
            results.push_back({"source " + a.name, source_common.out + "/" + a.name + "/eval_last/results.json"});
        for (const auto& [label, file] : results) {
            const nlohmann::json r = report::load_results_json(file);
            classes = r.at("classes").get<std::vector<std::string>>();
            columns.push_back(protocols::class_column(label + " clean", r, "clean", file));
            columns.push_back(protocols::class_column(label + " PGD-20", r, "pgd20", file));
        }
        std::string md = "# " + s.title + "\n\nLast checkpoint; accuracies in %; PGD-20 (L∞, α = ε/4, one random start) on "
                         "the real test set.\n\n## Construction (mean ||g(x_r) − g(x)||_2 over each set)\n\n"
                         "| set | images | steps | step | start | final | final, 8-bit |\n|---|---|---|---|---|---|---|\n";
        for (const auto& [name, l] : losses.items())
            md += "| " + name + " | " + std::to_string(l.at("images").get<int64_t>()) + " | " +
                  std::to_string(l.at("steps").get<int64_t>()) + " | " + fmt_number(l.at("step_size").get<double>()) + " | " +
                  fmt_number(l.at("mean_start_loss").get<double>()) + " | " + fmt_number(l.at("mean_final_loss").get<double>()) +
                  " | " + fmt_number(l.at("mean_final_loss_8bit").get<double>()) + " |\n";
        md += "\n## Average, worst and best class\n\n" + protocols::extremes_markdown(classes, columns) +
              "\n## Every class\n\n" + protocols::per_class_markdown(classes, columns);
        util::write_file_atomic((out / "features_table.md").string(), md);
        util::write_file_atomic((out / "per_class.csv").string(), protocols::per_class_csv(classes, columns));
        std::cout << "\n" << md << "\nwrote " << (out / "features_table.md").string() << " and "
                  << (out / "per_class.csv").string() << "\n";
        return 0;
    });
}
