#include "train/methods/trades.h"

#include <sstream>

#include "attacks/attack.h"
#include "train/methods/method_util.h"

namespace cw::train {

namespace {
constexpr float kStartSigma = 0.001f;
}

Trades::Trades(const MethodOptions& o)
    : eps_(o.eps), alpha_(o.resolved_alpha()), beta_(o.beta >= 0 ? o.beta : 6.f), steps_(o.steps),
      form_(o.trades_form), mode_(resolve_mode(o.attack_mode, attacks::ModelMode::Eval)),
      random_start_(o.random_start) {}

std::string Trades::describe() const {
    std::ostringstream os;
    os << "trades: KL inner maximisation, " << steps_ << " sign steps, eps " << over_255(eps_) << ", alpha "
       << over_255(alpha_) << ", start " << (random_start_ ? "x + 0.001*N(0,I)" : "x (no noise: x' stays at x)")
       << ", attack in " << attacks::mode_name(mode_) << " mode; loss "
       << (form_ == TradesForm::Original ? "original CE + beta*KL" : "CFA-normalised (1-b)*CE + b*KL, b = beta/(1+beta)")
       << ", beta " << beta_ << (class_beta_.empty() ? "" : " (per class)") << (class_eps_.empty() ? "" : ", eps per class")
       << (class_alpha_.empty() ? "" : ", alpha per class");
    return os.str();
}

Tensor Trades::adversarial(nn::Module& model, const Tensor& x, const Tensor& start,
                           const std::vector<int32_t>& host_labels) const {
    attacks::ModeScope scope(model, mode_);
    Tensor clean;
    {
        NoGradGuard no_grad;
        clean = model(x.detach());   // p(x) is a constant of the inner problem
    }
    auto kl_gradient = [&](const Tensor& xa) {
        InputGradOnlyGuard input_only;
        Tensor input = xa.detach();
        input.set_requires_grad(true);
        kl_div(clean, model(input), Reduction::Sum).backward();
        return input.grad().defined() ? input.grad() : Tensor::zeros(xa.shape(), DType::F32, xa.device());
    };
    return sign_ascent(x, start, per_sample_values(eps_, class_eps_, host_labels),
                       per_sample_values(alpha_, class_alpha_, host_labels), steps_, kl_gradient);
}

BatchLoss Trades::outer_loss(nn::Module& model, const Tensor& x, const Tensor& x_adv, const Tensor& labels,
                             const std::vector<int32_t>& host_labels) const {
    model.train();
    const Tensor nat = model(x);
    const Tensor adv = model(x_adv.detach());
    const int64_t b = x.size(0);
    const std::vector<float> betas = per_sample_values(beta_, class_beta_, host_labels);   // β_i: β, or β_{y_i}
    std::vector<float> w_ce(b), w_kl(b);
    for (int64_t i = 0; i < b; ++i) {
        const float beta = betas[i];
        const float scale = form_ == TradesForm::Original ? 1.f : 1.f / (1.f + beta);
        w_ce[i] = scale / static_cast<float>(b);
        w_kl[i] = scale * beta / static_cast<float>(b);
    }
    const Device d = x.device();
    const Tensor per_sample = add(mul(cross_entropy(nat, labels, {0.f, Tensor(), Reduction::None}), Tensor::from_vector(w_ce, {b}, d)),
                                  mul(kl_div(nat, adv, Reduction::None), Tensor::from_vector(w_kl, {b}, d)));
    return {per_sample, adv.detach()};
}

BatchLoss Trades::batch_loss(const BatchInput& in) {
    const Tensor start = random_start_ ? noisy_start(in.images, kStartSigma, in.rng) : in.images.detach().clone();
    const Tensor x_adv = adversarial(in.model, in.images, start, in.host_labels);
    return outer_loss(in.model, in.images, x_adv, in.labels, in.host_labels);
}

}  // namespace cw::train
