#include "jobs/job.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <map>
#include <numeric>

#include "datasets/augment.h"
#include "datasets/dataset.h"
#include "datasets/registry.h"
#include "datasets/splits.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/precision_scope.h"
#include "util/atomic_file.h"
#include "report/run_page.h"
#include "jobs/audit.h"
#include "jobs/final_evaluation.h"
#include "jobs/job_checks.h"
#include "eval/corruption_set.h"
#include "eval/evaluator.h"
#include "nn/checkpoint.h"
#include "nn/model_registry.h"
#include "train/methods/method_util.h"
#include "train/stop_signal.h"
#include "util/flags.h"
#include "util/split_list.h"

namespace cw::train {

float default_eps(const std::string& dataset) {
    if (dataset == "mnist") return 0.3f;
    if (dataset == "fashion-mnist") return 0.1f;
    return 8.f / 255;
}

std::string default_arch(const std::string& dataset) {
    if (dataset == "mnist" || dataset == "fashion-mnist") return "small_cnn";
    if (dataset.rfind("gtsrb", 0) == 0) return "gtsrb_cnn";
    return "preact_resnet18";
}

void add_job_flags(cli::FlagSet& app, JobConfig& job) {
    DataConfig& d = job.data;
    app.option("--dataset", d.dataset, "dataset (fashion-mnist needs no download; mnist, cifar10, cifar100, gtsrb32, svhn ...)")
        .show_default();
    app.option("--val-split", d.val_split,
               "validation images held out of training, per class: none, first:K (CFA/FAIR-TAT, K=100 on CIFAR-10), "
               "last:K (FRL/WAT, K=300), fraction:F").show_default();
    app.option("--train-n", d.train_n, "train on N images, class-proportional, in dataset order (0: all)")
        .range(int64_t{0}, int64_t{100000000});
    app.option("--train-file", d.train_file, "train on the images and labels of this safetensors file (images F32 "
                                                 "[N,C,H,W], labels I32 [N]; e.g. a feature set of benz_features) "
                                                 "instead of the dataset's training split; the test split stays --dataset's")
        .existing_file();
    app.option("--classes", d.classes, "all, or top:K: the K classes with the most training images (FRL's GTSRB: top:17)")
        .show_default();
    app.option("--epoch-eval-n", d.epoch_eval_n, "per-epoch evaluation on the first N of the --eval-n test images (0: all)")
        .range(int64_t{0}, int64_t{100000000});
    app.option("--eval-n", d.eval_n, "evaluate on the first N test images (0: all)").range(int64_t{0}, int64_t{100000000});
    app.option("--batch-size", d.batch_size, "training batch size").range(int64_t{1}, int64_t{1000000}).show_default();
    app.option("--eval-batch-size", d.eval_batch_size, "evaluation batch size").range(int64_t{1}, int64_t{1000000}).show_default();
    app.option("--augment", d.augment, "default (the dataset's), none, crop, flip or crop+flip").show_default();
    app.option("--pad-mode", d.pad_mode, "crop padding: reflect (Rice/CFA/FAIR-TAT) or zeros (TRADES/FRL/WAT/FAT)")
        .one_of({"reflect", "zeros"}).show_default();
    app.option("--normalize", d.normalize, "dataset (CIFAR mean/std as the model's first op) or none (TRADES/FRL)")
        .one_of({"dataset", "none"}).show_default();
    app.option("--arch", job.arch, "architecture (default: small_cnn for (Fashion-)MNIST, gtsrb_cnn for GTSRB, "
                                       "preact_resnet18 otherwise): " + util::join_list(nn::model_names()) +
                                       ", and any WideResNet as wrnD_W or dm_wrnD_W (depth D = 6n+4, width W; "
                                       "e.g. wrn16_1, dm_wrn70_16)");
    app.option("--method", job.method, "training method: " + util::join_list(method_names()) + ". Reconstructed where no reference code exists (docs/protocols/): bat (from BAT's abstract), "
                         "frl_baseline_rw (FRL's 'baseline reweight'), fair_tat_trades and fair_tat_fat (docs/protocols/fair_tat.md §4 item 4: the code ignores the target), "
                         "the proportional FAIR-TAT prior's floor; our proposals: the long-tail transfers "
                         "(n_k = robustly-correct counts, LDAM on a linear head, the cosine regulariser's formula)")
        .show_default();
    app.option("--init", job.init, "start from the weights of this checkpoint (FRL fine-tunes a PGD-AT model: "
                                       "its hot start); same architecture and classes").existing_file();
    app.option("--eps", job.eps, "L∞ radius for training and evaluation, e.g. 8/255 or 0.1 (default: MNIST 0.3, "
                                     "Fashion-MNIST 0.1, others 8/255)");
    add_method_flags(app, job.method_options);
    add_recipe_flags(app, job.trainer.recipe);
    TrainerConfig& t = job.trainer;
    app.option("--eval-steps", t.eval_steps, "PGD steps of the per-epoch evaluation (α = ε/4, 1 random start)")
        .range(1, 100000).show_default();
    app.option("--eval-every", t.eval_every, "evaluate after every N-th epoch (always after the last)")
        .range(int64_t{1}, int64_t{1000000}).show_default();
    app.option("--select-split", t.select_split, "split the best checkpoints are chosen on (default: val if any, else test)");
    app.option("--ema", t.ema.every, "weight averaging: off, epoch (CFA/FAIR-TAT), step, or fawa (CFA's "
                                         "fairness-aware averaging on the validation split; needs --val-split)")
        .one_of({"off", "epoch", "step", "fawa"}).show_default();
    app.option("--fawa-threshold", t.ema.fawa_threshold, "fawa: least worst-class validation PGD accuracy for an "
                                                             "epoch to join the average (CFA paper 0.2, code 0.24)")
        .range(0.f, 1.f).show_default();
    app.option("--ema-decay", t.ema.decay, "EMA decay (CFA paper / FAIR-TAT 0.85; CFA code 0.88; per-step 0.999)")
        .range(0.f, 1.f).show_default();
    app.option("--ema-start", t.ema.start_epoch, "first epoch (0-based) that updates the average (CFA paper 50, codes 0)")
        .range(int64_t{0}, int64_t{1000000}).show_default();
    app.option("--precision", job.precision,
               "the training step's CPU convolutions and matrix products: fp32, or bf16 (bf16 inputs, fp32 sums, fp32 "
               "master weights; "
               "needs AVX512_BF16, else fp32 with a note); evaluations stay as CLASSWISE_PRECISION says (fp32 "
               "unless set)")
        .one_of({"fp32", "bf16"});
    app.option("--audit-steps", t.audit_steps,
               "write steps.csv every N optimiser steps: per class the loss, count, gradient-share norm and cosine "
               "with the full gradient (0: off; costs one backward pass per class present)")
        .range(int64_t{0}, int64_t{1000000000}).show_default();
    app.option("--final-attacks", job.final_attacks, "attacks for the final evaluation (besides clean), comma-separated: "
                                                         "fgsm, pgd20, cw20, apgd-ce, apgd-t, fab-t, square5000, autoattack")
        .show_default();
    app.option("--final-checkpoints", job.final_checkpoints,
               "checkpoints evaluated at the end: last, best_robust (Rice), best_fair (CFA), ema_last, ema_best_robust, ema_best_fair")
        .show_default();
    app.option("--final-corruptions", job.final_corruptions,
               "common corruptions for each final checkpoint, into eval_<checkpoint>_corruptions/: all (19), "
               "benchmark (CIFAR-10-C's 15), fair-tat (FAIR-TAT's 18) or names, comma-separated (default: off)");
    app.option("--corruption-severities", job.corruption_severities, "severities of --final-corruptions, e.g. 1,2,3,4,5 or 3")
        .show_default();
}

namespace {
int run_job_signalled(JobConfig& job, std::ostream& out);
}

nlohmann::json training_settings(const JobConfig& job) {
    const float eps = job.eps.empty() ? default_eps(job.data.dataset) : eval::parse_fraction("--eps", job.eps);
    MethodOptions options = job.method_options;
    options.eps = eps;
    options.longtail.run_epochs = job.common.epochs;   // LDAM-DRW's default re-weighting epoch: 80% of the run
    nlohmann::json s = {{"dataset", job.data.dataset},
                        {"arch", job.arch.empty() ? default_arch(job.data.dataset) : job.arch},
                        {"method", make_method(job.method, options)->describe()},
                        {"eps", eps},
                        {"recipe", describe(job.trainer.recipe)},
                        {"batch_size", job.data.batch_size},
                        {"train_file", job.data.train_file},
                        {"val_split", job.data.val_split},
                        {"seed", job.common.seed},
                        {"ema", job.trainer.ema.every},
                        {"init", job.init}};
    if (!job.precision.empty()) s["precision"] = job.precision + " (training steps; evaluations as cpu_convolutions)";
    return s;
}

int run_job(JobConfig& job, std::ostream& out) {
    // One scope over training and the final evaluation: a signal in either stops the job with its state saved.
    StopSignalScope signals;
    try {
        return run_job_signalled(job, out);
    } catch (const eval::EvalInterrupted& e) {
        if (!stop_requested()) throw;   // a test's stop_after_steps: the caller asked for the exception
        out << e.what() << " — continue with --resume\n";
        return stop_exit_code();
    }
}

namespace {

// The model's geometry from the data, with the CIFAR mean/std as its first op under --normalize dataset.
nn::ModelConfig model_config(const JobConfig& job, const data::Dataset& train) {
    nn::ModelConfig cfg;
    cfg.num_classes = train.num_classes();
    cfg.in_channels = train.channels;
    cfg.input_size = train.height;
    if (job.data.normalize == "dataset" && job.data.dataset == "cifar10") {
        cfg.normalize_mean = {0.4914f, 0.4822f, 0.4465f};
        cfg.normalize_std = {0.2471f, 0.2435f, 0.2616f};
    } else if (job.data.normalize == "dataset" && job.data.dataset == "cifar100") {
        cfg.normalize_mean = {0.5071f, 0.4867f, 0.4408f};
        cfg.normalize_std = {0.2675f, 0.2565f, 0.2761f};
    }
    return cfg;
}

// --init's weights into `model` (FRL's hot start); a checkpoint of another dataset of the same shape is a transfer,
// allowed and said.
void load_initial_weights(const JobConfig& job, nn::Module& model, std::ostream& out) {
    nn::Metadata init_md;
    try {
        init_md = nn::read_metadata(job.init);
        nn::load_model(model, job.init);
    } catch (const std::exception& e) {
        throw std::invalid_argument("--init: " + std::string(e.what()));
    }
    if (init_md.count("dataset") && init_md.at("dataset") != job.data.dataset)
        out << "note: --init " << job.init << " was trained on " << init_md.at("dataset") << "; this run trains on "
            << job.data.dataset << "\n";
    out << "initial weights: " << job.init << (job.common.resume ? " (then replaced by the resumed state)" : "") << "\n";
}

// job.json: the resolved settings, checked against the run's own on --resume.
void record_job(const JobConfig& job, const JobImages& images, Device device) {
    nlohmann::json resolved = training_settings(job);
    resolved.update({{"experiment", job.experiment}, {"epochs", job.trainer.epochs},
                     {"train_images", images.train_idx.size()}, {"test_images", images.test_idx.size()},
                     {"device", device.str()}, {"audit_steps", job.trainer.audit_steps},
                     {"command_line", job.common.command_line}});
    // The CPU convolution code changes results at float rounding (docs/engine.md), so a study that compares runs
    // must see that they all ran under one setting: the environment's, recorded here.
    if (device.is_cpu()) resolved["cpu_convolutions"] = describe(cpu_backend().conv_policy());
    const std::string job_file = (std::filesystem::path(job.common.out) / "job.json").string();
    if (job.common.resume && std::filesystem::exists(job_file)) check_same_run(job_file, resolved);
    util::write_file_atomic(job_file, resolved.dump(2) + "\n");
}

int run_job_signalled(JobConfig& job, std::ostream& out) {
    const cli::CommonFlags& common = job.common;
    if (common.out.empty()) throw std::invalid_argument("--out: an output folder is required");
    check_fine_tune_start(job.method, job.init, job.method_options.faal.from_scratch);
    const float eps = job.eps.empty() ? default_eps(job.data.dataset) : eval::parse_fraction("--eps", job.eps);
    const std::string arch = job.arch.empty() ? default_arch(job.data.dataset) : job.arch;
    // The final evaluation's names are checked now: a typo must not wait for the end of training
    // (jobs/job_checks.h).
    FinalEvaluationPlan final_plan;
    final_plan.corruptions = eval::parse_corruption_list("--final-corruptions", job.final_corruptions);
    final_plan.severities = eval::parse_severities("--corruption-severities", job.corruption_severities);
    final_plan.checkpoints = final_checkpoint_list(job.final_checkpoints, job.trainer.ema.every);
    note_late_averaging(final_plan.checkpoints, job.trainer.ema.start_epoch, common.epochs, out);
    const FinalAttacks attacks = final_attacks(job.final_attacks, eps, out);
    final_plan.attacks = &attacks;
    const Device device = resolve_device(common.device);
    if (!job.precision.empty()) {
        if (!device.is_cpu())
            throw std::invalid_argument("--precision " + job.precision + ": only the CPU backend has a precision setting; "
                                        "the CUDA backend trains in fp32 (TF32 matrix units)");
        job.trainer.step_precision = parse_precision_flag("--precision", job.precision);
    }
    manual_seed(common.seed);
    std::filesystem::create_directories(common.out);

    // ---- data ----------------------------------------------------------------------------------------------
    const JobImages images = load_job_images(job.data, common.data_dir, out);
    data::LoaderOptions lo;
    lo.batch_size = job.data.batch_size;
    try {
        lo.augmentation = data::parse_augmentation(job.data.augment, job.data.pad_mode, job.data.dataset);
    } catch (const std::exception& e) {
        throw std::invalid_argument(std::string("--augment / --pad-mode: ") + e.what());
    }
    lo.device = device;
    Rng loader_rng(common.seed + 1);
    data::Loader loader(images.train, images.train_idx, lo, loader_rng);

    // ---- model and method ------------------------------------------------------------------------------------
    const nn::ModelConfig cfg = model_config(job, *images.train);
    const std::string mismatch = nn::input_geometry_mismatch("--arch " + arch, cfg, "the images of " + job.data.dataset,
                                                             images.train->channels, images.train->height,
                                                             images.train->width);
    if (!mismatch.empty()) throw std::invalid_argument(mismatch);
    const std::function<std::shared_ptr<nn::Module>()> new_model = [arch, cfg] { return nn::make_model(arch, cfg); };
    auto model = new_model();
    if (!job.init.empty()) load_initial_weights(job, *model, out);
    model->to(device);
    job.method_options.eps = eps;
    job.method_options.longtail.run_epochs = common.epochs;   // LDAM-DRW's default re-weighting epoch: 80% of the run
    MethodPtr method = make_method(job.method, job.method_options);

    // ---- trainer -------------------------------------------------------------------------------------------
    TrainerConfig& tc = job.trainer;
    tc.epochs = common.epochs;
    tc.out_dir = common.out;
    tc.resume = common.resume;
    tc.seed = common.seed;
    tc.eval_eps = eps;
    tc.eval_alpha = eps / 4;
    tc.log = &out;
    TrainSetup setup;
    setup.model = model;
    setup.new_model = new_model;
    setup.method = method.get();
    setup.loader = &loader;
    if (!images.split.val.empty())
        setup.evals.push_back({"val", batches_of(images.train, images.split.val, job.data.eval_batch_size, device)});
    std::vector<int64_t> epoch_test_idx = images.test_idx;
    if (job.data.epoch_eval_n > 0 && job.data.epoch_eval_n < static_cast<int64_t>(epoch_test_idx.size()))
        epoch_test_idx.resize(static_cast<size_t>(job.data.epoch_eval_n));
    setup.evals.push_back({"test", batches_of(images.test, epoch_test_idx, job.data.eval_batch_size, device)});
    setup.class_names = images.train->class_names;
    setup.model_metadata = nn::checkpoint_metadata(arch, cfg, {job.method, eps, common.seed});
    setup.model_metadata["dataset"] = job.data.dataset;

    record_job(job, images, device);
    out << "model: " << arch << " (" << model->num_parameters() << " parameters) on " << device.str() << "; eps "
        << over_255(eps) << "; per-epoch evaluation: clean and pgd" << tc.eval_steps << " (alpha eps/4)\n";

    const TrainResult result = Trainer(setup, tc).run();
    if (result.interrupted) return result.signal == SIGINT ? 130 : 143;

    evaluate_final_checkpoints(job, final_plan, images, new_model, device, out);
    if (const std::string memory = backend(device).memory_summary(); !memory.empty()) out << memory << "\n";
    report::write_run_page_after_run(common.out, out);
    return 0;
}
}  // namespace

}  // namespace cw::train
