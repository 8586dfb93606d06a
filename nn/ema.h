#pragma once
// Exponential moving average of a model's weights (docs/protocols/training.md §10): θ̄ ← decay·θ̄ + (1−decay)·θ over ALL state
// entries, BN running statistics included, so the averaged model is evaluated with averaged statistics.
// The first update copies θ. Integer buffers (num_batches_tracked) are copied, not averaged.
// CFA / FAIR-TAT update once per epoch (decay 0.85, from epoch 50 in the CFA paper, from epoch 0 in both codes);
// the common per-iteration variant (§10.3) updates after every optimiser step with decay 0.999.
// The averages live in a second instance of the same architecture: evaluate it like any model (eval mode).
#include <memory>

#include "nn/module.h"

namespace cw::nn {

enum class EmaEvery { Epoch, Step };

struct EmaOptions {
    float decay = 0.85f;
    EmaEvery every = EmaEvery::Epoch;
    int64_t start_epoch = 0;  // 0-based; no update happens during / after earlier epochs
};

class ModelEma {
public:
    // `average`: a fresh instance of the model's architecture (its initial values are never used).
    explicit ModelEma(std::shared_ptr<Module> average, EmaOptions options = {});

    // One unconditional update (the first one copies).
    void update(Module& model);
    // Training-loop hooks: update iff the schedule says so (every == Step / Epoch and epoch >= start_epoch).
    void after_step(Module& model, int64_t epoch);
    void after_epoch(Module& model, int64_t epoch);

    Module& averaged() { return *average_; }
    std::shared_ptr<Module> averaged_ptr() { return average_; }
    int64_t num_updates() const { return updates_; }
    void set_num_updates(int64_t n) { updates_ = n; }  // training-state resume
    const EmaOptions& options() const { return options_; }

private:
    std::shared_ptr<Module> average_;
    EmaOptions options_;
    int64_t updates_ = 0;
};

}  // namespace cw::nn
