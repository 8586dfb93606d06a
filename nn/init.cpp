#include "nn/init.h"

#include <cmath>
#include <vector>

namespace cw::nn::init {

void normal_(Tensor& t, float mean, float std, Rng& rng) {
    std::vector<float> v(static_cast<size_t>(t.numel()));
    rng.fill_normal(v.data(), v.size(), mean, std);
    t.copy_from(Tensor::from_vector(v, t.shape()));
}

void kaiming_normal_(Tensor& weight, Fan fan, Rng& rng) {
    if (weight.ndim() < 2) throw ShapeError("kaiming_normal_: expected a weight of rank >= 2, got " + weight.describe());
    int64_t receptive = 1;
    for (int d = 2; d < weight.ndim(); ++d) receptive *= weight.size(d);
    const int64_t n = (fan == Fan::In ? weight.size(1) : weight.size(0)) * receptive;
    normal_(weight, 0.f, std::sqrt(2.f / static_cast<float>(n)), rng);
}

}  // namespace cw::nn::init
