#pragma once
// TRADES (Zhang et al. 2019; docs/protocols/training.md §7).
// Inner maximisation, model in EVAL mode: x' = x + 0.001·N(0, I) (not clipped), then K times
//   x' ← Π_{ε_i-ball(x)} ∩ [0,1] (x' + α·sign ∇_{x'} Σ_i KL(p(x_i) ‖ p(x'_i)))   with p(x_i) held constant.
// Outer loss, model in TRAIN mode (clean forward first, then x', as TRADES' code begins; its third, clean forward
// for p(x) repeats the first's outputs and is not run: docs/protocols/training.md §7), gradient through both p(x)
// and p(x'):
//   Original (Zhang):  per_sample_i = (CE_i + β_i·KL_i) / B,                       β = 6
//   CfaNormalised:     per_sample_i = ((1 − b_i)·CE_i + b_i·KL_i) / B, b_i = β_i/(1+β_i)  (= the original/(1+β))
// β_i = β, or β_{y_i} once set_class_beta() has given per-class values (CFA's CCR); ε_i = ε, or ε_{y_i} after
// set_class_eps() (CFA's CCM); α_i = α, or α_{y_i} after set_class_alpha() (DAFA). Without the random start
// x' = x is a stationary point (the KL gradient is 0), so x' never moves: an ablation, not TRADES.
#include "train/methods/method_options.h"

namespace cw::train {

class Trades : public Method {
public:
    explicit Trades(const MethodOptions& o);
    std::string name() const override { return "trades"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;

    void set_class_beta(std::vector<float> beta_per_class) { class_beta_ = std::move(beta_per_class); }
    void set_class_eps(std::vector<float> eps_per_class) { class_eps_ = std::move(eps_per_class); }
    // α_{y_i} per class (DAFA scales the step with the radius); empty: α for every sample.
    void set_class_alpha(std::vector<float> alpha_per_class) { class_alpha_ = std::move(alpha_per_class); }

    // The two halves of batch_loss, public so that tests can start the inner loop from a given point and score a
    // given x'. adversarial() runs in the attack mode and restores the model's mode; outer_loss() leaves the
    // model in train mode.
    Tensor adversarial(nn::Module& model, const Tensor& x, const Tensor& start,
                       const std::vector<int32_t>& host_labels) const;
    BatchLoss outer_loss(nn::Module& model, const Tensor& x, const Tensor& x_adv, const Tensor& labels,
                         const std::vector<int32_t>& host_labels) const;

private:
    float eps_, alpha_, beta_;
    int steps_;
    TradesForm form_;
    attacks::ModelMode mode_;
    bool random_start_;
    std::vector<float> class_beta_, class_eps_, class_alpha_;
};

}  // namespace cw::train
