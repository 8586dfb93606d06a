// quickstart — the main job on a dataset that needs no download (Fashion-MNIST from the Debian package):
// adversarially train a small CNN with PGD-AT, then audit it class by class (clean, FGSM, PGD-20), writing
// results.json, records.csv and history.csv. It shows the project's subject in a few minutes on two cores: robust
// accuracy differs strongly between classes (shirts and pullovers are far less robust than trousers and bags).
//
//   ./experiments/quickstart [--quick] [--epochs 1] [--method pgd_at|natural] [--eps 0.1] [--device auto] [--resume]
#include <cstdlib>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "eval/evaluator.h"
#include "attacks/registry.h"
#include "datasets/augment.h"
#include "datasets/loader.h"
#include "datasets/registry.h"
#include "nn/checkpoint.h"
#include "nn/model_registry.h"
#include "nn/optim.h"
#include "nn/progress.h"
#include "nn/schedule.h"
#include "nn/training_state.h"

using namespace cw;

namespace {

struct Flags {
    std::string dataset = "fashion-mnist", data_dir, arch = "small_cnn", method = "pgd_at", device = "auto";
    std::string out = "runs/quickstart";
    int epochs = 1, batch_size = 128, pgd_steps = 10, eval_n = 2000;
    int64_t train_n = 0;
    float eps = 0.1f, lr = 0.01f;
    uint64_t seed = 0;
    bool resume = false;
};

// --quick: the same job on a few thousand real Fashion-MNIST images, about a minute on two cores (CI runs it).
// Measured on the 2-core machine: 1 epoch of 6,400 images at lr 0.01 leaves the loss at 2.30 (nothing learned);
// these reach ~1.2 and show the class gap (trousers ~90% robust under PGD-20, shirts a few percent).
const std::vector<std::pair<std::string, std::string>> kQuickPreset = {
    {"--train-n", "4000"}, {"--epochs", "3"},   {"--batch-size", "64"},
    {"--lr", "0.05"},      {"--eval-n", "500"}, {"--out", "runs/quickstart_quick"}};

std::string quick_preset_text() {
    std::string s;
    for (const auto& [flag, value] : kQuickPreset) s += (s.empty() ? "" : " ") + flag + " " + value;
    return s;
}

// Each preset value goes through the flag's own parser and check; a flag given on the command line keeps its value.
void apply_quick_preset(CLI::App& app, const std::string& dataset) {
    std::string applied, given;
    for (const auto& [flag, value] : kQuickPreset) {
        CLI::Option* opt = app.get_option(flag);
        if (opt->count()) {
            given += " " + flag + " " + opt->results().back();
            continue;
        }
        opt->add_result(value);
        opt->run_callback();
        applied += " " + flag + " " + value;
    }
    std::cout << "--quick preset (real " << dataset << " data):" << (applied.empty() ? " none" : applied)
              << (given.empty() ? std::string() : "; from the command line:" + given) << "\n";
}

int64_t count_correct(const Tensor& logits, const Tensor& labels) {
    auto pred = argmax(logits, 1).to_int_vector();
    auto y = labels.to_int_vector();
    int64_t c = 0;
    for (size_t i = 0; i < y.size(); ++i) c += pred[i] == y[i];
    return c;
}

// The loader's shuffle stream, kept in the training state so a resumed run sees the same epochs.
std::string words_to_string(const std::vector<uint64_t>& words) {
    std::string s;
    for (uint64_t w : words) s += (s.empty() ? "" : ",") + std::to_string(w);
    return s;
}
std::vector<uint64_t> words_from_string(const std::string& s) {
    std::vector<uint64_t> words;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) words.push_back(std::stoull(item));
    return words;
}

}  // namespace

int main(int argc, char** argv) {
    Flags f;
    CLI::App app{"classwise quickstart: PGD adversarial training and a per-class robustness audit"};
    app.add_option("--dataset", f.dataset, "dataset name (default needs no download)");
    app.add_option("--data-dir", f.data_dir, "data folder (default: $CLASSWISE_DATA, else ./data)");
    app.add_option("--arch", f.arch, "model architecture");
    app.add_option("--method", f.method, "natural or pgd_at")->check(CLI::IsMember({"natural", "pgd_at"}));
    app.add_option("--epochs", f.epochs, "training epochs")->check(CLI::Range(1, 1000000));
    app.add_option("--batch-size", f.batch_size, "batch size")->check(CLI::Range(1, 1000000));
    app.add_option("--eps", f.eps, "L-inf radius in [0,1] pixel units (training and evaluation)")->check(CLI::Range(0.f, 1.f));
    app.add_option("--pgd-steps", f.pgd_steps, "PGD steps for training")->check(CLI::Range(1, 1000000));
    const CLI::Validator positive(
        [](std::string& v) {
            char* end = nullptr;
            const double x = std::strtod(v.c_str(), &end);
            return (end != v.c_str() && *end == 0 && x > 0 && x < 1e3) ? std::string()
                                                                       : "expected a number in (0, 1000), got '" + v + "'";
        },
        "(0, 1000)");
    app.add_option("--lr", f.lr, "SGD learning rate")->check(positive);
    app.add_option("--train-n", f.train_n, "train on the first N training images (0: all)")->check(CLI::Range(0, 100000000));
    app.add_option("--eval-n", f.eval_n, "evaluate on the first N test images")->check(CLI::Range(1, 1000000));
    app.add_option("--device", f.device, "auto, cpu or cuda");
    app.add_option("--seed", f.seed, "random seed");
    app.add_option("--out", f.out, "output folder");
    app.add_flag("--resume", f.resume, "continue from <out>/state.safetensors");
    bool quick = false;
    app.add_flag("--quick", quick, "short preset on real data: " + quick_preset_text() + " (flags given explicitly win)");
    CLI11_PARSE(app, argc, argv);
    if (quick) apply_quick_preset(app, f.dataset);

    try {
        const Device device = resolve_device(f.device);
        manual_seed(f.seed);
        std::filesystem::create_directories(f.out);

        // ---- data ------------------------------------------------------------------------------------------------
        auto train = std::make_shared<data::Dataset>(data::load_dataset(f.dataset, "train", f.data_dir));
        auto test = std::make_shared<data::Dataset>(data::load_dataset(f.dataset, "test", f.data_dir));
        std::cout << "data: " << train->name << " " << train->size() << " images from " << train->source << "; "
                  << test->name << " " << test->size() << " images\n";
        data::LoaderOptions lo;
        lo.batch_size = f.batch_size;
        lo.augmentation = data::default_augmentation(f.dataset);
        lo.device = device;
        Rng loader_rng(f.seed + 1), attack_rng(f.seed + 2);
        std::vector<int64_t> train_indices(static_cast<size_t>(f.train_n > 0 ? std::min(f.train_n, train->size()) : train->size()));
        std::iota(train_indices.begin(), train_indices.end(), 0);
        data::Loader loader(train, train_indices, lo, loader_rng);

        // ---- model, optimiser, schedule ---------------------------------------------------------------------
        nn::ModelConfig cfg;
        cfg.num_classes = train->num_classes();
        cfg.in_channels = train->channels;
        cfg.input_size = train->height;
        auto model = nn::make_model(f.arch, cfg);
        model->to(device);
        nn::SGD opt(model->parameters(), {f.lr, 0.9f, 0.f, 5e-4f, false});
        auto schedule = nn::make_lr_schedule("piecewise", f.lr, f.epochs);
        nn::Metadata meta = nn::checkpoint_metadata(f.arch, cfg, {f.method, f.eps, f.seed});

        nn::TrainingState state;
        state.model = model.get();
        state.optimizer = &opt;
        state.rngs = {{"global", &global_rng()}, {"loader", &loader_rng}, {"attack", &attack_rng}};
        state.model_metadata = meta;
        const std::string state_path = f.out + "/state.safetensors";
        if (f.resume && std::filesystem::exists(state_path)) {
            const nn::ModelSpec saved = nn::model_spec_from_metadata(nn::read_metadata(state_path));
            const std::string mismatch = nn::input_geometry_mismatch("the " + saved.arch + " model of " + state_path,
                saved.config, "the images of " + f.dataset, train->channels, train->height, train->width);
            if (!mismatch.empty()) throw std::runtime_error("--resume: " + mismatch);
            nn::load_training_state(state_path, state);
            loader.set_rng_state(words_from_string(state.method_metadata.at("loader_rng")));
            std::cout << "resumed from " << state_path << " after epoch " << state.epoch << "\n";
        }

        // PGD-AT (Madry; Rice et al. settings): the attack is crafted with the model in train mode.
        attacks::AttackOptions train_attack;
        train_attack.eps = f.eps;
        train_attack.alpha = 2.5f * f.eps / static_cast<float>(f.pgd_steps);
        train_attack.mode = attacks::ModelMode::Train;
        auto pgd = attacks::make_attack("pgd" + std::to_string(f.pgd_steps), train_attack);

        // ---- training -----------------------------------------------------------------------------------------
        nn::Progress progress(std::cout, f.epochs, loader.batches_per_epoch());
        std::ofstream history(f.out + "/train_log.csv", f.resume ? std::ios::app : std::ios::trunc);
        if (!f.resume) history << "epoch,lr,loss,train_accuracy,seconds\n";
        for (int64_t epoch = state.epoch; epoch < f.epochs; ++epoch) {
            model->train();
            progress.start_epoch(epoch);
            data::Batch b;
            for (int64_t i = 0; loader.next(b); ++i) {
                opt.set_lr(static_cast<float>(schedule->lr(nn::progress_after_step(epoch, i, loader.batches_per_epoch()))));
                Tensor x = f.method == "pgd_at" ? pgd->run(*model, b.images, b.labels, attack_rng).x_adv : b.images;
                opt.zero_grad();
                Tensor logits = (*model)(x);
                Tensor loss = cross_entropy(logits, b.labels);
                const float loss_value = loss.item();
                if (!std::isfinite(loss_value))
                    throw Error("training diverged: loss is " + std::to_string(loss_value) + " at epoch " +
                                std::to_string(epoch + 1) + ", batch " + std::to_string(i + 1) + " (lower --lr)");
                loss.backward();
                opt.step();
                ++state.step;
                progress.update(i, loss_value, count_correct(logits, b.labels), b.size());
            }
            state.epoch = epoch + 1;
            state.method_metadata["loader_rng"] = words_to_string(loader.rng_state());
            nn::save_training_state(state_path, state);
            nn::save_model(*model, f.out + "/last.safetensors", meta);
            history << epoch + 1 << "," << opt.lr() << "," << progress.epoch_loss() << ","
                    << progress.epoch_accuracy() << "," << progress.epoch_seconds() << std::endl;
        }

        // ---- per-class audit ------------------------------------------------------------------------------------
        model->eval();
        const int64_t n = std::min<int64_t>(f.eval_n, test->size());
        std::vector<eval::EvalBatch> batches;
        for (int64_t s = 0; s < n; s += f.batch_size) {
            std::vector<int64_t> idx;
            for (int64_t i = s; i < std::min<int64_t>(n, s + f.batch_size); ++i) idx.push_back(i);
            data::Batch b = data::make_batch(*test, idx, device);
            batches.push_back({b.images, b.labels, b.indices});
        }
        attacks::AttackOptions eval_attack;
        eval_attack.eps = f.eps;
        eval_attack.alpha = f.eps / 8.f;
        auto fgsm = attacks::make_attack("fgsm", eval_attack);
        auto pgd20 = attacks::make_attack("pgd20", eval_attack);
        eval::EvalOptions eo;
        eo.info.experiment = "quickstart";
        eo.info.dataset = f.dataset;
        eo.info.split = "test";
        eo.info.arch = f.arch;
        eo.info.checkpoint = f.out + "/last.safetensors";
        eo.info.method = f.method;
        eo.info.device = device.str();
        eo.info.seed = f.seed;
        eo.info.classes = test->class_names;
        eo.out_dir = f.out;
        eo.log = &std::cout;
        auto outcome = eval::evaluate(*model, eval::batches_from(std::move(batches)), {fgsm.get(), pgd20.get()}, eo);
        std::cout << "wrote " << f.out << "/results.json, records.csv, last.safetensors\n";
    } catch (const std::exception& e) {
        std::cerr << "quickstart: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
