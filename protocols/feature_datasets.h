#pragma once
// Ilyas et al. 2019 (§3.1, App. C): the robust and non-robust feature datasets. For every training pair (x, y),
// start from a different, randomly chosen training image x0 and solve min_{x_r} ||g(x_r) − g(x)||_2 by
// normalised-gradient L2 descent (each step moves every image by step_size · ∇/||∇||_2, pixels clamped to [0,1]);
// keep the label y. g is the model's representation (nn::Classifier::features, the input of its final linear
// layer). With an adversarially trained model's g the set holds (mostly) robust features, D_R; with a naturally
// trained model's g, D_NR.
//
// The set is written as a safetensors file: "images" F32 [N,C,H,W] in [0,1], "labels" I32 [N], per-image
// "start_index" I64 [N] (the dataset index of x0), "start_loss" / "final_loss" F32 [N]; the metadata records
// the steps, step size, seed and source model. `train --train-file F` trains on it (jobs/job.h).
// A long construction is saved batch by batch into <path>.parts/ (one part file per batch); with resume, finished
// parts written with the same settings are kept and the rest is built. SIGINT / SIGTERM stop it after the current
// batch (saved). Every batch is deterministic given the seed, so a resumed set equals an uninterrupted one.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "engine/tensor.h"
#include "nn/models/classifier.h"

namespace cw::protocols {

// For every i in 0..n-1 an index j != i, uniform over the other n-1 (n >= 2), from a seeded Rng.
std::vector<int64_t> start_indices(int64_t n, uint64_t seed);

struct FeatureMatch {
    Tensor images;                   // [B,C,H,W] in [0,1]: each image's lowest-loss iterate
    std::vector<float> start_loss;   // ||g(start) − g(target)||_2 per image
    std::vector<float> final_loss;   // the same for `images`
};

// The descent on one batch, the model put in eval mode for it (BatchNorm running statistics, no dropout: the images
// of a batch do not interact, and g is the function the model computes at test time); its mode is restored after.
// Keeps each image's best iterate, the last one included (fixed-length normalised steps oscillate near the
// minimum instead of settling).
FeatureMatch match_features(nn::Classifier& model, const Tensor& targets, const Tensor& start, int64_t steps,
                            float step_size);

struct FeatureSetOptions {
    int64_t steps = 1000;            // Ilyas et al.
    float step_size = 0.1f;          // Ilyas et al. (L2, per step)
    int64_t batch_size = 250;        // also the unit of saving and resuming
    uint64_t seed = 0;               // the starting images
    bool resume = false;
    std::string source;              // the model's checkpoint, for the metadata (the resume key hashes the weights)
    std::ostream* log = nullptr;     // progress lines
    // Stop once this many new parts are written, leaving the set unfinished for a later resume (0: never); what an
    // interrupted construction looks like, for tests and time-boxed runs.
    int64_t stop_after_parts = 0;
};

struct FeatureSetSummary {
    int64_t images = 0;
    double start_loss = 0;           // means over the set
    double final_loss = 0;
    double final_loss_u8 = 0;        // of the images rounded to 256 levels, as a training set holds them
    double seconds = 0;              // this call's construction time (0 when the file existed)
    bool finished = true;            // false: stopped by stop_after_parts, no file written yet
};

// Builds the set from data's images `indices` (targets and labels; the starts are drawn among the same images)
// into `path`. An existing file with the same settings is kept when resuming (its summary read back). Throws
// std::invalid_argument on bad options and on a model without a representation accessor.
FeatureSetSummary build_feature_dataset(nn::Classifier& model, const data::Dataset& data,
                                        const std::vector<int64_t>& indices, const std::string& path,
                                        const FeatureSetOptions& options);

}  // namespace cw::protocols
