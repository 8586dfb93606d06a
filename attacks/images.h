#pragma once
// A host-side batch of images, for the attack that searches on the host (FAB), Square's stripe start and for checks
// of returned points. The gradient attacks keep their images on the model's device (engine/attack_ops.h).
#include <cstdint>
#include <vector>

#include "engine/tensor.h"

namespace cw::attacks {

struct Images {
    int64_t n = 0;             // samples
    Shape sample_shape;        // [C, H, W]
    std::vector<float> v;      // n * dim() values, sample-major

    Images() = default;
    Images(int64_t n, Shape sample_shape, float fill = 0.f);
    int64_t dim() const;       // values per sample (C*H*W)
    float* row(int64_t i) { return v.data() + i * dim(); }
    const float* row(int64_t i) const { return v.data() + i * dim(); }
    int64_t channels() const { return sample_shape.at(0); }
    int64_t height() const { return sample_shape.at(1); }
    int64_t width() const { return sample_shape.at(2); }
};

// [N, C, H, W] tensor (any device) <-> host images.
Images from_tensor(const Tensor& x);
Tensor to_tensor(const Images& x, Device device);

// Rows `rows` of x, in that order.
Images take_rows(const Images& x, const std::vector<int64_t>& rows);

// Per-sample norms of a - b (b may be null: norms of a).
std::vector<float> linf_dist(const Images& a, const Images& b);
std::vector<float> l2_dist(const Images& a, const Images& b);

// clip_box(v) = min(max(v, 0), 1) element-wise.
void clip_box(Images& x);

// Indices i with mask[i] set.
std::vector<int64_t> where(const std::vector<uint8_t>& mask);

}  // namespace cw::attacks
