#pragma once
// A host-side batch of images that the attacks do their bookkeeping on. The model sees device tensors (see
// oracle.h); everything an attack decides per sample — projections, best-point tracking, step-size schedules —
// is plain arithmetic on these rows, so it reads like the spec's pseudo-code and behaves the same on every device.
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

// Rows `rows` of x, in that order / written back into those rows.
Images take_rows(const Images& x, const std::vector<int64_t>& rows);
void put_rows(Images& dst, const std::vector<int64_t>& rows, const Images& src);
// Row i of dst becomes row i of src where mask[i] is set.
void copy_rows_where(Images& dst, const Images& src, const std::vector<uint8_t>& mask);

// Per-sample norms of a - b (b may be null: norms of a).
std::vector<float> linf_dist(const Images& a, const Images& b);
std::vector<float> l2_dist(const Images& a, const Images& b);

// clip_box(v) = min(max(v, 0), 1) element-wise.
void clip_box(Images& x);
// attacks.md §0: ball first, box second, with each sample's own radius eps[i].
void project_linf(Images& x_adv, const Images& x, const std::vector<float>& eps);
void project_l2(Images& x_adv, const Images& x, const std::vector<float>& eps);

// Indices i with mask[i] set.
std::vector<int64_t> where(const std::vector<uint8_t>& mask);

}  // namespace cw::attacks
