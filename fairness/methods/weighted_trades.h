#pragma once
// The cost-sensitive TRADES outer loss that FRL, WAT, DAFA and TRIX share: model in TRAIN mode, two forwards (clean
// then x' for FRL and WAT; x' then clean for DAFA and TRIX, whose codes run model(x_adv) first), and
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

// Which batch the outer loss forwards first. The loss and its gradient are the same either way (train-mode batch
// norm normalises each batch by its own statistics); BN's running statistics are not: the second batch's weigh
// more (momentum 0.1: 0.1 against 0.09), and eval-mode accuracy reads them.
enum class OuterOrder { CleanFirst, AdversarialFirst };

BatchLoss weighted_trades_loss(nn::Module& model, const Tensor& x, const Tensor& x_adv, const Tensor& labels,
                               const TradesCoefficients& coef, TradesTerms* terms = nullptr,
                               OuterOrder order = OuterOrder::CleanFirst);

// ε·m(y_i) style lookups: out_i = per_class[y_i]; throws naming `what` when a label is outside the table.
std::vector<float> class_lookup(const std::vector<double>& per_class, const std::vector<int32_t>& labels,
                                const char* what);

}  // namespace cw::train
