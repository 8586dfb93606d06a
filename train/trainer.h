#pragma once
// The training loop — the only one in the project. Every method (train/method.h) and every experiment runs on it.
//
//   Trainer trainer(setup, config);
//   TrainResult r = trainer.run();      // epochs, per-epoch evaluation, checkpoints; resumable
//
// Per batch: lr from the schedule; the method's per-sample loss; a NaN or Inf loss stops the run (TrainingDiverged,
// the last checkpoint is kept); backward (or, every --audit-steps steps, the per-class gradient audit, which leaves
// the same gradient); optimiser step; per-step EMA; the method's clean forward after the step if it asks for one.
// Per epoch: the method's end_epoch (class state, early stop), per-epoch EMA, evaluation on every split (clean and
// PGD, per class, docs/protocols/training.md §11), history.csv / train_log.csv rows, last and best checkpoints, and the training
// state (atomic) from which --resume continues bit for bit on the CPU.
//
// Files in out_dir:
//   state.safetensors    everything a resume needs (model, optimiser, EMA, RNG streams, loader order, method state,
//                        the epoch in progress, best scores); written after every epoch and on SIGINT/SIGTERM
//   last.safetensors     the model after the last epoch (ema_last.safetensors: the averaged model)
//   best_robust.safetensors  highest overall PGD accuracy on the selection split (Rice et al.)
//   best_fair.safetensors    highest overall + worst-class PGD accuracy on the selection split (CFA)
//   ema_best_robust.safetensors, ema_best_fair.safetensors: the same rules on the averaged model
//   selection.json       which epoch each best checkpoint comes from, its score and the rule
//   history.csv, train_log.csv, steps.csv (train/history.h, train/step_audit.h)
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/loader.h"
#include "engine/cpu/cpu_backend.h"
#include "nn/checkpoint.h"
#include "nn/module.h"
#include "train/epoch_eval.h"
#include "train/method.h"
#include "train/recipe.h"

namespace cw::train {

struct EmaConfig {
    // off; epoch (CFA / FAIR-TAT, docs/protocols/training.md §10.1); step (§10.3); fawa (CFA's fairness-aware averaging,
    // docs/protocols/cfa.md §3: an epoch's model joins the average only if its worst validation class keeps PGD accuracy
    // >= fawa_threshold; needs a validation split)
    std::string every = "off";
    float decay = 0.85f;         // CFA paper / FAIR-TAT code; per-step EMA usually 0.999
    int64_t start_epoch = 50;    // 0-based; CFA paper 50, both reference codes 0
    float fawa_threshold = 0.2f; // CFA paper 0.2, CFA code 0.24
};

struct TrainerConfig {
    int64_t epochs = 10;
    Recipe recipe;
    // Per-epoch evaluation (model.eval()): clean and PGD-K on every split, per class.
    float eval_eps = 8.f / 255;
    float eval_alpha = 2.f / 255;
    int eval_steps = 10;
    int64_t eval_every = 1;            // evaluate after every N-th epoch (and always after the last)
    std::string select_split;          // split the best checkpoints are chosen on; empty: "val" if given, else the first
    EmaConfig ema;
    int64_t audit_steps = 0;           // per-class gradient audit every N optimiser steps (0: off)
    // --precision: the CPU convolutions of each training step (its attack, forward, backward, clean forward); the
    // evaluations keep the environment's. std::nullopt: the environment's everywhere.
    std::optional<ConvPrecision> step_precision;
    std::string out_dir;
    bool resume = false;               // continue from out_dir/state.safetensors if it exists
    uint64_t seed = 0;
    std::ostream* log = nullptr;       // progress lines and epoch summaries; nullptr: silent
    int64_t print_every = 20;          // progress line every N batches
    // Tests: behave as if SIGTERM arrived after this many optimiser steps of this call (-1: never).
    int64_t interrupt_after_steps = -1;
    // Tests: called after every optimiser step with the step count (plant faults, send signals).
    std::function<void(int64_t step)> after_step;
    // Called once when the loop starts with the epoch's batch count (the study's CPU estimate extrapolates with it).
    std::function<void(int64_t batches_per_epoch)> on_start;
};

struct TrainSetup {
    std::shared_ptr<nn::Module> model;                     // on its device, freshly initialised
    std::function<std::shared_ptr<nn::Module>()> new_model;  // a fresh instance of the architecture (EMA); needed iff EMA
    Method* method = nullptr;
    data::Loader* loader = nullptr;
    std::vector<EvalSplit> evals;                          // e.g. {"val", ...}, {"test", ...}
    std::vector<std::string> class_names;
    nn::Metadata model_metadata;                           // written into every checkpoint (arch, config, run info)
};

struct SelectedCheckpoint {
    int64_t epoch = 0;        // 1-based; 0: none yet
    double score = 0;
    std::string path;
};

struct TrainResult {
    int64_t epochs_completed = 0;
    int64_t steps = 0;
    bool interrupted = false;     // SIGINT / SIGTERM (or the test hook): state saved, resumable
    int signal = 0;
    bool stopped_early = false;   // the method ended training (e.g. FGSM-RS's guard)
    std::string stop_reason;
    std::string last_path, ema_last_path;
    std::map<std::string, SelectedCheckpoint> best;  // "robust", "fair", "ema_robust", "ema_fair"
};

// The checkpoints a run can leave, by the names of their files and of --final-checkpoints: last, best_robust,
// best_fair, and with weight averaging ema_last, ema_best_robust, ema_best_fair.
const std::vector<std::string>& checkpoint_names();
// A best checkpoint's name from its selection key ("robust" -> best_robust, "ema_fair" -> ema_best_fair).
std::string best_checkpoint_name(const std::string& key);

// A NaN or Inf loss. The message names the epoch, batch and step and the checkpoint that was kept.
struct TrainingDiverged : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Trainer {
public:
    Trainer(TrainSetup setup, TrainerConfig config);
    ~Trainer();
    TrainResult run();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cw::train
