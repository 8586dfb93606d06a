#include "attacks/images.h"

#include <algorithm>
#include <cmath>

namespace cw::attacks {

Images::Images(int64_t n_, Shape shape, float fill) : n(n_), sample_shape(std::move(shape)) {
    v.assign(static_cast<size_t>(n * dim()), fill);
}

int64_t Images::dim() const { return shape_numel(sample_shape); }

Images from_tensor(const Tensor& x) {
    CW_CHECK(x.ndim() == 4, ShapeError, "attacks: expected images [N, C, H, W], got " + x.describe());
    Images out;
    out.n = x.size(0);
    out.sample_shape = {x.size(1), x.size(2), x.size(3)};
    out.v = x.to_vector();
    return out;
}

Tensor to_tensor(const Images& x, Device device) {
    Shape s = {x.n};
    s.insert(s.end(), x.sample_shape.begin(), x.sample_shape.end());
    return Tensor::from_vector(x.v, s, device);
}

Images take_rows(const Images& x, const std::vector<int64_t>& rows) {
    Images out(static_cast<int64_t>(rows.size()), x.sample_shape);
    for (size_t k = 0; k < rows.size(); ++k)
        std::copy(x.row(rows[k]), x.row(rows[k]) + x.dim(), out.row(static_cast<int64_t>(k)));
    return out;
}

std::vector<float> linf_dist(const Images& a, const Images& b) {
    std::vector<float> out(a.n, 0.f);
    for (int64_t i = 0; i < a.n; ++i)
        for (int64_t j = 0; j < a.dim(); ++j)
            out[i] = std::max(out[i], std::fabs(a.row(i)[j] - b.row(i)[j]));
    return out;
}

std::vector<float> l2_dist(const Images& a, const Images& b) {
    std::vector<float> out(a.n, 0.f);
    for (int64_t i = 0; i < a.n; ++i) {
        double s = 0;
        for (int64_t j = 0; j < a.dim(); ++j) {
            const double d = a.row(i)[j] - b.row(i)[j];
            s += d * d;
        }
        out[i] = static_cast<float>(std::sqrt(s));
    }
    return out;
}

void clip_box(Images& x) {
    for (float& v : x.v) v = std::min(std::max(v, 0.f), 1.f);
}

std::vector<int64_t> where(const std::vector<uint8_t>& mask) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < mask.size(); ++i)
        if (mask[i]) out.push_back(static_cast<int64_t>(i));
    return out;
}

}  // namespace cw::attacks
