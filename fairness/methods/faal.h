#pragma once
// FAAL — Fairness-Aware Adversarial Learning (Zhang et al., CVPR 2024; docs/protocols/faal.md, from the authors'
// code): a short fine-tuning of an adversarially trained model (--init) in which every batch's loss is reweighted by
// class-wise distributionally adversarial weights. Per batch:
//   1. x' by the base attack in EVAL mode (faal: PGD-K CE from a uniform start; faal_trades: TRADES' KL ascent);
//   2. the train-mode forward on x' (then, by default, one on the clean batch: the code's BN side effect);
//   3. ℓ_k = class-k mean of max_{j≠y} softmax_j(x') − softmax_y(x'), detached; c_k = n_k·ℓ_k (or ℓ_k);
//   4. p = argmax_{p ∈ Δ_K, KL(u‖p) ≤ r} Σ_k c_k p_k  (fairness/methods/faal_dro.h, exact);
//   5. per_sample_i = K·p_{y_i}/B · L_i, L_i = CE(f(x'_i), y_i) (faal) or CE(f(x_i), y_i) + β·KL(p(x_i)‖p(x'_i))
//      (faal_trades). With r = 0 the weights are uniform and faal is PGD-AT with an eval-mode attack.
// No state crosses batches; the class state (steps.csv, history.csv) is what the step used.
#include "attacks/pgd.h"
#include "train/methods/method_options.h"

namespace cw::train {

enum class FaalLoss { At, Trades };

class Faal : public Method {
public:
    Faal(FaalLoss loss, const MethodOptions& o);
    std::string name() const override { return loss_ == FaalLoss::At ? "faal" : "faal_trades"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    void start_epoch(const EpochStart& start) override;

    // "weight": K·p_k of the last batch (the factor on class k's mean loss; 1 = uniform); "margin": its ℓ_k (−1 for
    // a class absent from the batch); "mean_weight": K·p_k averaged over the epoch's batches so far.
    std::vector<std::string> class_state_names() const override { return {"weight", "margin", "mean_weight"}; }
    std::vector<std::vector<double>> class_state() const override;
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    // Steps 3-4 on one batch's adversarial softmax ([B, K] row-major): returns K·p_k per class and records it (and
    // the margins) as the method's state, as batch_loss does.
    std::vector<double> class_weights(const std::vector<float>& probs, const std::vector<int32_t>& labels, int classes);

private:
    void ensure_classes(int c);

    FaalLoss loss_;
    MethodOptions o_;
    attacks::Pgd attack_;
    int classes_ = 0;
    std::vector<double> weight_, margin_, weight_sum_;
    int64_t batches_ = 0;   // this epoch's batches, for mean_weight
};

}  // namespace cw::train
