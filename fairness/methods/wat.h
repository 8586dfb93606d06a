#pragma once
// WAT — Worst-class Adversarial Training (Li & Liu 2023; docs/protocols/wat.md, from code). TRADES base (eval-mode
// attack from x + 0.001·N(0,I), K sign steps, β = 6) with C+1 Hedge weights (C classes + one "average" expert),
// all 1 at the start. Batch loss
//   L = (1/B) Σ_k w_k Σ_{i: y_i = k} (CE_i + β·KL_i) + w_C · (1/B) Σ_i (CE_i + β·KL_i)
// i.e. per_sample_i = (w_{y_i} + w_C)/B · (CE_i + β·KL_i). After every epoch e, on the validation split (TRADES
// attack, eval mode): c_e(k) = mean over class-k samples of CE_nat + β·KL, c_e(C) = the overall mean, then
//   w = C · softmax(η · Σ_{s≤e} c_s)   over the C+1 entries (Σw = C).
#include "fairness/methods/weighted_trades.h"
#include "train/methods/method_options.h"

namespace cw::train {

// The Hedge step: C · softmax(η·cum_cost) over cum_cost's C+1 entries.
std::vector<double> wat_hedge_weights(const std::vector<double>& cum_cost, double eta);

class Wat : public Method {
public:
    explicit Wat(const MethodOptions& o);
    std::string name() const override { return "wat"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    void start_epoch(const EpochStart& start) override;
    EpochDecision end_epoch(const EpochEnd& end) override;

    // "weight"/"cum_cost": w_k and Σ_s c_s(k) per class; "avg_weight"/"avg_cum_cost": the average expert's entry
    // (index C), repeated in every class column.
    std::vector<std::string> class_state_names() const override;
    std::vector<std::vector<double>> class_state() const override;
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override;
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override;

    // One Hedge update from an epoch's per-class mean costs and the overall mean.
    void update(const std::vector<double>& class_cost, double mean_cost);
    // (w_{y_i} + w_C)/B for CE_i and β times that for KL_i.
    TradesCoefficients loss_coefficients(const std::vector<int32_t>& labels) const;
    const std::vector<double>& weights() const { return w_; }   // C+1 entries

private:
    void ensure_classes(int c);
    MethodOptions trades_options() const;

    MethodOptions o_;
    int classes_ = 0;
    std::vector<double> w_, cum_;
};

}  // namespace cw::train
