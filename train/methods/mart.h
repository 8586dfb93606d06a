#pragma once
// MART (Wang et al. 2020; docs/protocols/training.md §9), constants from the reference code (YisenWang/MART, mart.py).
// Attack, model in EVAL mode: K sign steps on CE from x + 0.001·N(0, I) (not clipped), projected to the ε-ball
// and the box. Loss, model in TRAIN mode (clean forward first, then x'), p = softmax f(x), p' = softmax f(x'):
//   BCE_i = CE(f(x'_i), y_i) − log(1.0001 − p'_{i,ŷ_i} + 1e-12),   ŷ_i = argmax_{k≠y_i} p'_{i,k}
//   KL_i  = Σ_k p_{i,k}·(log p_{i,k} − log(p'_{i,k} + 1e-12))
//   per_sample_i = (BCE_i + β·KL_i·(1.0000001 − p_{i,y_i})) / B
// The gradient flows through p in both KL_i and the weight (1.0000001 − p_{i,y_i}), as in the reference code.
// β = 5 by default: MART's ResNet-18 code (the paper's WRN-34-10 runs use 6). log p is taken as
// log(p + 1e-30) where PyTorch's kl_div uses xlogy (0·log 0 = 0): equal for every p > 1e-23, finite at p = 0.
#include "train/methods/method_options.h"

namespace cw::train {

class Mart : public Method {
public:
    explicit Mart(const MethodOptions& o);
    std::string name() const override { return "mart"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;

    // The two halves of batch_loss (tests start the attack from a given point and score a given x').
    Tensor adversarial(nn::Module& model, const Tensor& x, const Tensor& start,
                       const std::vector<int32_t>& host_labels) const;
    BatchLoss outer_loss(nn::Module& model, const Tensor& x, const Tensor& x_adv, const Tensor& labels) const;

private:
    float eps_, alpha_, beta_;
    int steps_;
    attacks::ModelMode mode_;
    bool random_start_;
};

// The per-sample MART terms from clean and adversarial logits (the formulas above, times B).
struct MartTerms {
    Tensor bce;        // [B]
    Tensor kl;         // [B], unweighted
    Tensor weight;     // [B], 1.0000001 − p_{i,y_i}
};
MartTerms mart_terms(const Tensor& nat_logits, const Tensor& adv_logits, const Tensor& labels);

}  // namespace cw::train
