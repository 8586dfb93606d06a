#include "nn/grad_clip.h"

#include <cmath>

#include "engine/backend.h"

namespace cw::nn {

double grad_norm(const std::vector<Tensor*>& params) {
    double sum_sq = 0;
    for (Tensor* p : params) {
        Tensor g = p->grad();
        if (g.defined()) sum_sq += backend(g.device()).sum_squares(g.f32(), g.numel());
    }
    return std::sqrt(sum_sq);
}

double clip_grad_norm(const std::vector<Tensor*>& params, double max_norm) {
    if (!(max_norm > 0)) throw Error("clip_grad_norm: max_norm must be positive");
    const double total = grad_norm(params);
    const double coef = max_norm / (total + 1e-6);
    if (coef < 1.0) {
        for (Tensor* p : params) {
            Tensor g = p->grad();
            if (!g.defined()) continue;
            backend(g.device()).unary(UnaryOp::MulScalar, g.f32(), g.f32(), g.numel(), static_cast<float>(coef), 0.f);
        }
    }
    return total;
}

}  // namespace cw::nn
