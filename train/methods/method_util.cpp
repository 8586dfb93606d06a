#include "train/methods/method_util.h"

#include <cstdio>

#include "attacks/attack.h"
#include "attacks/steps.h"
#include "engine/attack_ops.h"
#include "engine/ops.h"

namespace cw::train {

Tensor per_sample_mean_ce(const Tensor& logits, const Tensor& labels) {
    const int64_t b = logits.size(0);
    return mul(cross_entropy(logits, labels, {0.f, Tensor(), Reduction::None}), 1.f / static_cast<float>(b));
}

Tensor sign_ascent(const Tensor& x_nat, const Tensor& start, const std::vector<float>& eps, float alpha, int steps,
                   const InputGradient& grad) {
    return sign_ascent(x_nat, start, eps, std::vector<float>(static_cast<size_t>(x_nat.size(0)), alpha), steps, grad);
}

Tensor sign_ascent(const Tensor& x_nat, const Tensor& start, const std::vector<float>& eps,
                   const std::vector<float>& alpha, int steps, const InputGradient& grad) {
    const int64_t n = x_nat.size(0);
    const Tensor nat = x_nat.detach();
    const Tensor eps_t = Tensor::from_vector(eps, {n}, nat.device());
    const Tensor alpha_t = Tensor::from_vector(alpha, {n}, nat.device());
    Tensor x = start.detach().clone();
    for (int k = 0; k < steps; ++k) {
        const Tensor g = grad(x);
        NoGradGuard no_grad;
        attack_step_(AttackNorm::Linf, x, g, nat, eps_t, alpha_t);
    }
    return x;
}

Tensor noisy_start(const Tensor& x, float sigma, Rng& rng) {
    NoGradGuard no_grad;
    const std::vector<float> noise = attacks::normal_noise(x.size(0), attacks::values_per_sample(x), sigma, rng);
    return add(x.detach(), Tensor::from_vector(noise, x.shape(), x.device()));
}

std::string over_255(float v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g/255 (%.5g)", static_cast<double>(v) * 255, static_cast<double>(v));
    return buf;
}

std::vector<float> per_sample_values(float v, const std::vector<float>& per_class, const std::vector<int32_t>& labels) {
    if (per_class.empty()) return std::vector<float>(labels.size(), v);
    return attacks::class_wise(labels, per_class);
}

std::vector<Tensor> clone_state(nn::Module& model) {
    std::vector<Tensor> out;
    for (auto& e : model.state()) out.push_back(e.tensor->clone());
    return out;
}

}  // namespace cw::train
