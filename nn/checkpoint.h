#pragma once
// Model checkpoints: safetensors files whose tensor names are the PyTorch state_dict keys of the equivalent
// PyTorch model (docs/protocols/safetensors.md), so they load in PyTorch and public PyTorch checkpoints
// load here. Float tensors are stored as F32, num_batches_tracked as an I64 scalar; the metadata records what
// the weights cannot say (model_metadata() of nn/model_registry.h: arch, num_classes, input_size,
// normalisation, PreAct shortcut variant, ... plus, by convention, "method", "eps", "seed"; save_model adds
// "classwise_version"). Writes are atomic (temp file + rename).
#include <map>
#include <memory>
#include <string>

#include "nn/model_registry.h"
#include "nn/module.h"
#include "nn/safetensors.h"

namespace cw::nn {

// The checkpoint does not fit the model: missing, unexpected or mis-shaped tensors, all listed in one message.
struct CheckpointError : Error {
    using Error::Error;
};

const char* classwise_version();

// How the weights were trained: the metadata keys "method" (e.g. "pgd_at", "trades", "frl"), "eps" and "seed".
struct RunInfo {
    std::string method;
    double eps = 0;
    uint64_t seed = 0;
};
// model_metadata(arch, cfg) plus the run's keys: the metadata every classwise checkpoint carries.
Metadata checkpoint_metadata(const std::string& arch, const ModelConfig& cfg, const RunInfo& run);

void save_model(Module& model, const std::string& path, const Metadata& metadata = {});

// Strict: every state entry of `model` must be in the file with its shape, and nothing else may be. Leading
// "module." / "model." (DataParallel, wrappers) are stripped; F16 / BF16 / F64 are converted to F32. On any
// mismatch nothing is copied and one CheckpointError lists every missing, unexpected and mis-shaped name.
// A damaged file is an st::FormatError, an unreadable one an st::IoError, both naming the path.
void load_model(Module& model, const std::string& path);

// Only the header's __metadata__ (reads the header bytes, not the weights): lets tools build the right
// architecture before loading.
Metadata read_metadata(const std::string& path);

struct LoadedModel {
    std::shared_ptr<Module> model;
    ModelSpec spec;
    Metadata metadata;
};
// read_metadata -> model_spec_from_metadata -> make_model -> load_model.
LoadedModel load_model_from_checkpoint(const std::string& path);

// One line when a model built for cfg's in_channels x input_size x input_size meets images of another geometry
// ("<model> was built for 3x32x32 inputs, but <images> are 1x28x28"), "" when they agree: said before the first
// forward, where the mismatch would surface deep inside an op (Normalize's per-channel statistics, say).
std::string input_geometry_mismatch(const std::string& model, const ModelConfig& cfg, const std::string& images,
                                    int64_t channels, int64_t height, int64_t width);

// ---- building blocks (also used by training-state files) -------------------------------------------------
using Records = std::map<std::string, const st::TensorRecord*>;
// Float tensors of `records` holding NaN or infinity, named with their counts in one message ("" when none): a
// checkpoint with a NaN weight would otherwise load and, say, report an accuracy.
std::string nonfinite_problems(const Records& records, const std::string& source);
// The problems that would make load_module_state fail (missing, unexpected, mis-shaped or non-finite tensors), as
// one message ("" when none). `source` names the file.
std::string module_state_problems(Module& model, const Records& records, const std::string& source);
// Checks (throwing CheckpointError with module_state_problems' message), then copies every entry.
void load_module_state(Module& model, const Records& records, const std::string& source);
// Adds the model's state entries to `file` as prefix + name.
void add_module_state(st::File& file, Module& model, const std::string& prefix = "");

}  // namespace cw::nn
