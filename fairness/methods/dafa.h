#pragma once
// DAFA, Distance-Aware Fair Adversarial Training (Lee et al., ICLR 2024; docs/protocols/dafa.md), on TRADES:
//   epochs before τ (warm-up): plain TRADES (x' from x + 0.001·N(0,I), K eval-mode sign steps on Σ KL, then
//     CE(f(x), y)/B + β·KL(p(x) ‖ p(x'))/B in train mode, x' forwarded before x as in the code), and in epoch τ−1 every trained sample's softmax of its
//     adversarial logits is summed per class (DafaSchedule);
//   from epoch τ on: W from the class similarity (DAFA's rule), and per sample
//     ε_i = max(W_{y_i}, 0)·ε,  α_i = max(W_{y_i}, 0)·α,  per_sample_i = W_{y_i}·CE_i/B + β·KL_i/B
//   (the code weights only the clean CE term; the KL term keeps weight 1).
#include <memory>

#include "fairness/methods/dafa_schedule.h"
#include "train/methods/method_options.h"
#include "train/methods/trades.h"

namespace cw::train {

class Dafa : public Method {
public:
    explicit Dafa(const MethodOptions& o);
    std::string name() const override { return "dafa"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    EpochDecision end_epoch(const EpochEnd& end) override;

    std::vector<std::string> class_state_names() const override { return {"weight", "eps", "self_prob"}; }
    std::vector<std::vector<double>> class_state() const override;
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    // The inner maximisation from `start` with the current ε_k, α_k (eval mode; restores the model's mode).
    Tensor adversarial(nn::Module& model, const Tensor& x, const Tensor& start,
                       const std::vector<int32_t>& host_labels) const {
        return trades_->adversarial(model, x, start, host_labels);
    }
    // Pushes the schedule's weights into the attack's ε_k, α_k (after a test drives the schedule directly).
    void refresh() { push_to_trades(); }

    DafaSchedule& schedule() { return schedule_; }
    const DafaSchedule& schedule() const { return schedule_; }

private:
    void ensure_classes(int num_classes);
    void push_to_trades();

    float eps_, alpha_, beta_;
    DafaSchedule schedule_;
    std::unique_ptr<Trades> trades_;   // the inner maximisation, with ε_k and α_k pushed in once W is known
};

// The outer loss DAFA and TRIX share: W_{y_i}·CE(f(x_i), y_i)/B + β·KL(p(x_i) ‖ p(x'_i))/B, train mode, the
// adversarial batch forwarded first and the clean one second (both codes' order: what BN's running statistics see).
BatchLoss dafa_outer_loss(nn::Module& model, const Tensor& x, const Tensor& x_adv, const Tensor& labels,
                          const std::vector<float>& sample_weight, float beta);

// Softmax rows of logits [B, C] on the host (what DafaSchedule::record sums).
std::vector<float> host_probabilities(const Tensor& logits);

}  // namespace cw::train
