#pragma once
// A mini-batch: images as float32 [B, C, H, W] in [0, 1] (normalisation is the model's first op), int32 labels
// [B], and the dataset index of every sample (the evaluator keys per-sample records on them).
#include <cstdint>
#include <vector>

#include "datasets/augment.h"
#include "datasets/dataset.h"
#include "engine/device.h"
#include "engine/rng.h"
#include "engine/tensor.h"

namespace cw::data {

// The engine-free form, built on a loader's worker thread; tensors are made on the consuming thread so device
// uploads stay on the thread that owns the device context.
struct HostBatch {
    int channels = 0, height = 0, width = 0;
    std::vector<float> images;    // B * C * H * W
    std::vector<int32_t> labels;  // B
    std::vector<int64_t> indices; // B dataset indices
    int64_t size() const { return static_cast<int64_t>(indices.size()); }
};

struct Batch {
    cw::Tensor images;             // float32 [B, C, H, W]
    cw::Tensor labels;             // int32 [B]
    std::vector<int64_t> indices;  // dataset index of each row
    int64_t size() const { return static_cast<int64_t>(indices.size()); }
};

// Gathers the images (augmented with `aug`, drawing from *rng, when aug.enabled()) and scales them to [0, 1].
// Throws DataError on an out-of-range index, or if augmentation is requested without an rng.
HostBatch gather_batch(const Dataset& data, const std::vector<int64_t>& indices, const Augmentation& aug = {},
                       cw::Rng* rng = nullptr);
Batch to_batch(const HostBatch& host, cw::Device device = cw::Device::cpu());
// gather_batch + to_batch, for evaluation code that picks its own indices.
Batch make_batch(const Dataset& data, const std::vector<int64_t>& indices, cw::Device device = cw::Device::cpu(),
                 const Augmentation& aug = {}, cw::Rng* rng = nullptr);

}  // namespace cw::data
