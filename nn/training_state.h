#pragma once
// Everything needed to resume a run bit for bit, in one safetensors file written atomically: the model, the
// optimiser state (momentum buffers / Adam moments, lr, step count), epoch and step counters, named RNG states,
// the EMA model, and whatever the training method keeps (named tensors + string metadata).
// Layout: tensors "model/<key>", "ema/<key>", "optimizer/<key>", "rng/<name>" (U64 words), "method/<name>";
// metadata: the model metadata given (arch, ...), "kind" = "training_state", "epoch", "step",
// "optimizer.lr", "optimizer.steps", "ema.num_updates", "method.<key>", "classwise_version".
#include <map>
#include <string>

#include "engine/rng.h"
#include "nn/checkpoint.h"
#include "nn/ema.h"
#include "nn/optim.h"

namespace cw::nn {

struct TrainingState {
    Module* model = nullptr;           // required
    Optimizer* optimizer = nullptr;    // optional
    ModelEma* ema = nullptr;           // optional
    int64_t epoch = 0;                 // epochs completed
    int64_t step = 0;                  // optimiser steps taken
    std::map<std::string, Rng*> rngs;  // e.g. {"global", &global_rng()}, {"loader", &loader_rng}
    std::map<std::string, Tensor> method_tensors;
    Metadata method_metadata;
    Metadata model_metadata;           // model_metadata(arch, cfg) + run info; saved as is
};

void save_training_state(const std::string& path, const TrainingState& state);

// Restores into the objects `state` points to and fills epoch, step, method_tensors, method_metadata and
// model_metadata. Strict: the file must hold exactly the parts `state` has (an EMA iff state.ema, the same
// RNG names, optimiser state of the same kind); a mismatch is a CheckpointError naming it. The model and EMA
// are checked before anything is changed.
void load_training_state(const std::string& path, TrainingState& state);

}  // namespace cw::nn
