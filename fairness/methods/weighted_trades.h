#pragma once
// The cost-sensitive TRADES outer loss that FRL and WAT share: model in TRAIN mode, clean forward then x', and
//   per_sample_i = ce_coef_i · CE(f(x_i), y_i) + kl_coef_i · KL(p(x_i) ‖ p(x'_i))
// with the gradient through both p(x) and p(x'). The callers fold their class weights and normalisers into the
// coefficients (FRL: w_nat(y_i)/Σ_b w_nat(y_b) and β·w_bdy(y_i)/Σ_b w_bdy(y_b); WAT: (w_{y_i} + w_C)/B and β times
// that), so the per-sample terms sum to the batch loss.
#include <vector>

#include "train/method.h"

namespace cw::train {

// Both terms of every sample, without the graph: what the tests and WAT's validation cost read.
struct TradesTerms {
    std::vector<float> ce, kl;
};

// The coefficients of every sample's CE and KL term.
struct TradesCoefficients {
    std::vector<float> ce, kl;
};

BatchLoss weighted_trades_loss(nn::Module& model, const Tensor& x, const Tensor& x_adv, const Tensor& labels,
                               const TradesCoefficients& coef, TradesTerms* terms = nullptr);

// ε·m(y_i) style lookups: out_i = per_class[y_i]; throws naming `what` when a label is outside the table.
std::vector<float> class_lookup(const std::vector<double>& per_class, const std::vector<int32_t>& labels,
                                const char* what);

}  // namespace cw::train
