#pragma once
// Models by name: make_model("preact_resnet18", cfg). Each architecture is one file under nn/models/ whose
// state-dict keys and parameter counts equal those of the public PyTorch definition named there (asserted in
// tests/test_nn_models.cpp against tools/pytorch_models.py). The configuration round-trips through checkpoint
// metadata, so a checkpoint says which model to build (model_spec_from_metadata).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nn/models/activation.h"
#include "nn/models/preact_resnet.h"

namespace cw::nn {

struct ModelConfig {
    int64_t num_classes = 10;
    int64_t in_channels = 3;
    int64_t input_size = 32;                   // 28 (MNIST), 32 (CIFAR, GTSRB), 64 (TinyImageNet); square
    // Both empty: no normalisation. Otherwise the model's first op is (x - mean) / std per channel; it has no
    // state-dict entries (docs/protocols/training.md §1.3).
    std::vector<float> normalize_mean, normalize_std;
    PreActShortcut preact_shortcut = PreActShortcut::FromActivation;  // preact_resnet18 only
    bool preact_final_bn = true;               // preact_resnet18: false = FRL's pre_resnet.py
    bool wrn_sub_block1 = false;               // wrn*: true = TRADES' wideresnet.py key set
    Activation activation = Activation::Relu;  // dm_*: relu or silu; every other family is relu only
    // resnet*, preact_resnet*, dm_preact_resnet*: the first stage's width; 0 = the architecture's own (64).
    int64_t base_width = 0;
};

// Throws cw::Error listing the known names for an unknown architecture.
std::shared_ptr<Module> make_model(const std::string& arch, const ModelConfig& cfg = {});
// The table's names (the generic families, wrnD_W and dm_wrnD_W, are not listed: any depth and width).
std::vector<std::string> model_names();
// True for a name make_model builds: a table name or a valid generic one (wrn16_1, dm_wrn70_16).
bool is_model_name(const std::string& arch);

using Metadata = std::map<std::string, std::string>;

// The configuration as checkpoint metadata: arch, num_classes, in_channels, input_size, normalize_mean,
// normalize_std ("0.4914,0.4822,0.4465" or "none"), preact_shortcut ("activation" | "input"),
// preact_final_bn, wrn_sub_block1 ("true" | "false"); activation ("silu") and base_width only where they differ
// from relu and the architecture's own width, so checkpoints of the other models keep their metadata.
Metadata model_metadata(const std::string& arch, const ModelConfig& cfg);

struct ModelSpec {
    std::string arch;
    ModelConfig config;
};
// Inverse of model_metadata. arch and num_classes are required; other keys default as in ModelConfig (so
// checkpoints written by other tools with just those keys load). A malformed value is an Error naming the key.
ModelSpec model_spec_from_metadata(const Metadata& metadata);

}  // namespace cw::nn
