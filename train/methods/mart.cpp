#include "train/methods/mart.h"

#include <sstream>

#include "attacks/attack.h"
#include "attacks/oracle.h"
#include "train/methods/method_util.h"

namespace cw::train {

namespace {
constexpr float kStartSigma = 0.001f;
}

Mart::Mart(const MethodOptions& o)
    : eps_(o.eps), alpha_(o.resolved_alpha()), beta_(o.beta >= 0 ? o.beta : 5.f), steps_(o.steps),
      mode_(resolve_mode(o.attack_mode, attacks::ModelMode::Eval)), random_start_(o.random_start) {}

std::string Mart::describe() const {
    std::ostringstream os;
    os << "mart: PGD-" << steps_ << " Linf CE, eps " << over_255(eps_) << ", alpha " << over_255(alpha_) << ", start "
       << (random_start_ ? "x + 0.001*N(0,I)" : "x") << ", attack in " << attacks::mode_name(mode_)
       << " mode; loss BCE + beta*KL*(1 - p_y), beta " << beta_;
    return os.str();
}

Tensor Mart::adversarial(nn::Module& model, const Tensor& x, const Tensor& start,
                         const std::vector<int32_t>& host_labels) const {
    attacks::ModeScope scope(model, mode_);
    attacks::ModelOracle oracle(model, x.device());
    const attacks::Objective ce = attacks::make_objective(AttackObjective::CrossEntropy, host_labels, x.device());
    auto ce_gradient = [&](const Tensor& xa) { return oracle.value_and_grad(xa, ce).grad; };
    return sign_ascent(x, start, std::vector<float>(host_labels.size(), eps_), alpha_, steps_, ce_gradient);
}

MartTerms mart_terms(const Tensor& nat_logits, const Tensor& adv_logits, const Tensor& labels) {
    const int64_t classes = adv_logits.size(1);
    const Tensor p = softmax(nat_logits), p_adv = softmax(adv_logits);
    // ŷ_i: the most likely wrong class under x' (the label's logit pushed out of the running).
    Tensor runner_up;
    {
        NoGradGuard no_grad;
        runner_up = argmax(add(adv_logits.detach(), mul(one_hot(labels, classes), -1e30f)), 1);
    }
    MartTerms t;
    t.bce = sub(cross_entropy(adv_logits, labels, {0.f, Tensor(), Reduction::None}),
                log(add(rsub(1.0001f, gather(p_adv, runner_up)), 1e-12f)));
    t.kl = sum(mul(p, sub(log(add(p, 1e-30f)), log(add(p_adv, 1e-12f)))), 1);
    t.weight = rsub(1.0000001f, gather(p, labels));
    return t;
}

BatchLoss Mart::outer_loss(nn::Module& model, const Tensor& x, const Tensor& x_adv, const Tensor& labels) const {
    model.train();
    const Tensor nat = model(x);
    const Tensor adv = model(x_adv.detach());
    const MartTerms t = mart_terms(nat, adv, labels);
    const float inv_b = 1.f / static_cast<float>(x.size(0));
    return {mul(add(t.bce, mul(mul(t.kl, t.weight), beta_)), inv_b), adv.detach()};
}

BatchLoss Mart::batch_loss(const BatchInput& in) {
    const Tensor start = random_start_ ? noisy_start(in.images, kStartSigma, in.rng) : in.images.detach().clone();
    return outer_loss(in.model, in.images, adversarial(in.model, in.images, start, in.host_labels), in.labels);
}

}  // namespace cw::train
