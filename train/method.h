#pragma once
// A training method: what the trainer asks of it, once per batch and once per epoch. Every method — natural,
// PGD-AT, FGSM-RS, TRADES, FAT, MART, and the fair methods that keep class state (FRL, CFA, FAIR-TAT) — is one
// small unit behind this interface; the loop around it (train/trainer.h) exists once.
//
// The batch loss is returned as a sum of per-sample terms, loss = Σ_i per_sample_i (any normalisation — 1/B,
// FRL's Σ_b w_b — already folded into each term). That makes "class k's share of the gradient",
// ∇ Σ_{i: y_i = k} per_sample_i, well defined on the whole batch's graph (train-mode BN sees the full batch), and
// the shares add up to the full gradient: what the per-step audit (train/step_audit.h) reports.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/rng.h"
#include "nn/checkpoint.h"
#include "nn/module.h"
#include "train/class_stats.h"
#include "train/epoch_eval.h"

namespace cw::train {

// One training batch as a method sees it.
struct BatchInput {
    nn::Module& model;                      // in train mode; methods switch modes for their attacks themselves
    const Tensor& images;                   // [B, C, H, W] in [0, 1], on the model's device
    const Tensor& labels;                   // int32 [B], on the model's device
    const std::vector<int32_t>& host_labels;
    int64_t epoch;                          // 0-based
    int64_t batch;                          // 0-based index within the epoch
    int num_classes;
    Rng& rng;                               // the method's stream: attack starts, noise, sampled targets
};

struct BatchLoss {
    Tensor per_sample;   // [B]; the batch loss is sum(per_sample), with the graph to the parameters
    // [B, C]: the logits the method trained on (adversarial ones for the AT methods, taken in the training forward
    // pass before the step) — the training accuracy and the per-class training statistics (class_stats.h) come
    // from them. May be detached.
    Tensor logits;
};

// The validation split (the images --val-split holds out of training, no augmentation) as the fair methods see
// it: FRL's multiplier updates and WAT's Hedge weights are computed on it. Null when the run has no validation split.
struct Validation {
    const EvalSplit* split = nullptr;
    uint64_t seed = 0;                      // for evaluate_split's attack randomness
};

// What a method learns at the end of an epoch.
struct EpochEnd {
    int64_t epoch;                          // 0-based, the epoch just finished
    const ClassStats& train;                // per-class counts from BatchLoss::logits over the epoch
    nn::Module& model;
    Validation validation = {};
};

// Before the first batch of every epoch (not again when a resumed run continues an epoch midway: whatever the
// method decides here must be in its saved state).
struct EpochStart {
    int64_t epoch;                          // 0-based
    nn::Module& model;
    Validation validation = {};
};

// A method may end training early (FGSM-RS's catastrophic-overfitting guard). If restore is set the trainer
// copies `restore_state` (Module::state() order) into the model before the final checkpoints.
struct EpochDecision {
    bool stop = false;
    std::string reason;
    std::vector<Tensor> restore_state;
};

// BN side effect of the reference codes (docs/protocols/training.md §5): a forward pass on the clean batch after the optimiser
// step, to log training clean accuracy, in train mode (Rice, CFA: the running statistics also see clean images).
enum class CleanForward { Off, Train, Eval };

class Method {
public:
    virtual ~Method() = default;
    virtual std::string name() const = 0;         // registry name, e.g. "pgd_at"
    virtual std::string describe() const = 0;     // one line: the method and every setting that changes its loss
    virtual BatchLoss batch_loss(const BatchInput& in) = 0;
    virtual void start_epoch(const EpochStart& start) {}
    virtual EpochDecision end_epoch(const EpochEnd& end) { return {}; }

    virtual CleanForward clean_forward_after_step() const { return CleanForward::Off; }

    // Named per-class vectors of the method's state (e.g. "eps", "weight"), written to steps.csv and history.csv
    // after every epoch. Names are fixed for the method's lifetime; baselines have none.
    virtual std::vector<std::string> class_state_names() const { return {}; }
    virtual std::vector<std::vector<double>> class_state() const { return {}; }

    // Resume: whatever the method keeps across epochs, saved in the training state (keys without prefix).
    virtual void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const {}
    virtual void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) {}
};

using MethodPtr = std::unique_ptr<Method>;

}  // namespace cw::train
