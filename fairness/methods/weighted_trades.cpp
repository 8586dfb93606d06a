#include "fairness/methods/weighted_trades.h"

#include <stdexcept>
#include <string>

#include "engine/ops.h"

namespace cw::train {

BatchLoss weighted_trades_loss(nn::Module& model, const Tensor& x, const Tensor& x_adv, const Tensor& labels,
                               const TradesCoefficients& coef, TradesTerms* terms, OuterOrder order) {
    const std::vector<float>& ce_coef = coef.ce;
    const std::vector<float>& kl_coef = coef.kl;
    const int64_t b = x.size(0);
    if (static_cast<int64_t>(ce_coef.size()) != b || static_cast<int64_t>(kl_coef.size()) != b)
        throw std::invalid_argument("weighted TRADES loss: " + std::to_string(ce_coef.size()) + " CE and " +
                                    std::to_string(kl_coef.size()) + " KL coefficients for a batch of " +
                                    std::to_string(b));
    model.train();
    Tensor nat, adv;
    if (order == OuterOrder::CleanFirst) {
        nat = model(x);
        adv = model(x_adv.detach());
    } else {
        adv = model(x_adv.detach());
        nat = model(x);
    }
    const Tensor ce = cross_entropy(nat, labels, {0.f, Tensor(), Reduction::None});
    const Tensor kl = kl_div(nat, adv, Reduction::None);
    if (terms) {
        terms->ce = ce.detach().to_vector();
        terms->kl = kl.detach().to_vector();
    }
    const Device d = x.device();
    const Tensor per_sample = add(mul(ce, Tensor::from_vector(ce_coef, {b}, d)), mul(kl, Tensor::from_vector(kl_coef, {b}, d)));
    return {per_sample, adv.detach()};
}

std::vector<float> class_lookup(const std::vector<double>& per_class, const std::vector<int32_t>& labels,
                                const char* what) {
    std::vector<float> out;
    out.reserve(labels.size());
    for (int32_t y : labels) {
        if (y < 0 || static_cast<size_t>(y) >= per_class.size())
            throw std::invalid_argument(std::string(what) + ": label " + std::to_string(y) + " outside the " +
                                        std::to_string(per_class.size()) + " classes");
        out.push_back(static_cast<float>(per_class[y]));
    }
    return out;
}

}  // namespace cw::train
