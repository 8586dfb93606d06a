#include "fairness/methods/dafa.h"

#include <sstream>

#include "engine/ops.h"
#include "fairness/methods/class_calibration.h"
#include "fairness/methods/weighted_trades.h"
#include "train/methods/method_util.h"

namespace cw::train {

namespace {
constexpr float kStartSigma = 0.001f;
}

BatchLoss dafa_outer_loss(nn::Module& model, const Tensor& x, const Tensor& x_adv, const Tensor& labels,
                          const std::vector<float>& sample_weight, float beta) {
    const size_t b = sample_weight.size();
    TradesCoefficients coef;
    coef.ce.resize(b);
    coef.kl.assign(b, beta / static_cast<float>(b));
    for (size_t i = 0; i < b; ++i) coef.ce[i] = sample_weight[i] / static_cast<float>(b);
    return weighted_trades_loss(model, x, x_adv, labels, coef, nullptr, OuterOrder::AdversarialFirst);
}

std::vector<float> host_probabilities(const Tensor& logits) {
    NoGradGuard no_grad;
    return softmax(logits.detach()).to_vector();
}

Dafa::Dafa(const MethodOptions& o)
    : eps_(o.eps), alpha_(o.resolved_alpha()), beta_(o.beta >= 0 ? o.beta : 6.f), schedule_(o.dafa, "dafa") {
    if (!o.random_start)
        throw std::invalid_argument("dafa: the TRADES inner loop needs its x + 0.001*N(0,I) start (x' = x is a "
                                    "stationary point of the KL); --no-random-start is not supported");
    MethodOptions t = o;
    t.beta = beta_;
    t.trades_form = TradesForm::Original;
    trades_ = std::make_unique<Trades>(t);
}

std::string Dafa::describe() const {
    std::ostringstream os;
    os << "dafa: DAFA on [" << trades_->describe() << "]; warm-up " << schedule_.warmup()
       << " epochs of plain TRADES, then from the last warm-up epoch's adversarial class probabilities W_i = 1 + "
       << schedule_.lambda() << "*sum_j(...) (ties: " << (schedule_.ties() == DafaTies::Code ? "code" : "paper")
       << "); eps_k = W_k*eps, alpha_k = W_k*alpha, loss W_y*CE + " << beta_ << "*KL";
    return os.str();
}

void Dafa::ensure_classes(int num_classes) {
    if (schedule_.num_classes() > 0 || num_classes <= 0) return;
    schedule_.ensure_classes(num_classes);
    push_to_trades();
}

void Dafa::push_to_trades() {
    if (!schedule_.active()) return;   // the warm-up: TRADES' own ε and α
    std::vector<float> e, a;
    for (float s : schedule_.radius_scale()) {
        e.push_back(s * eps_);
        a.push_back(s * alpha_);
    }
    trades_->set_class_eps(e);
    trades_->set_class_alpha(a);
}

BatchLoss Dafa::batch_loss(const BatchInput& in) {
    ensure_classes(in.num_classes);
    const Tensor start = noisy_start(in.images, kStartSigma, in.rng);
    const Tensor x_adv = trades_->adversarial(in.model, in.images, start, in.host_labels);
    BatchLoss out = dafa_outer_loss(in.model, in.images, x_adv, in.labels, schedule_.sample_weights(in.host_labels), beta_);
    if (schedule_.recording(in.epoch)) schedule_.record(in.epoch, host_probabilities(out.logits), in.host_labels);
    return out;
}

EpochDecision Dafa::end_epoch(const EpochEnd& end) {
    ensure_classes(end.train.num_classes());
    schedule_.end_epoch(end.epoch);
    push_to_trades();
    return {};
}

std::vector<std::vector<double>> Dafa::class_state() const {
    std::vector<double> eps;
    for (float s : schedule_.radius_scale()) eps.push_back(static_cast<double>(s * eps_));
    return {schedule_.weights(), eps, schedule_.self_probability()};
}

void Dafa::save_state(std::map<std::string, Tensor>&, nn::Metadata& meta) const { schedule_.save(meta); }

void Dafa::load_state(const std::map<std::string, Tensor>&, const nn::Metadata& meta) {
    schedule_.load(meta);
    push_to_trades();
}

}  // namespace cw::train
