#include "fairness/methods/faal.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "engine/ops.h"
#include "fairness/methods/faal_dro.h"
#include "train/methods/method_util.h"
#include "train/methods/trades.h"
#include "train/state_vectors.h"

namespace cw::train {

namespace {
constexpr float kStartSigma = 0.001f;   // TRADES' x + 0.001·N(0, I) start

attacks::PgdConfig faal_attack_config(const MethodOptions& o) {
    attacks::PgdConfig c;
    c.eps = o.eps;
    c.alpha = o.resolved_alpha();
    c.steps = o.steps;
    c.start = o.random_start ? attacks::RandomStart::Uniform : attacks::RandomStart::None;
    c.mode = resolve_mode(o.attack_mode, attacks::ModelMode::Eval);   // the code's model.eval() around the attack
    c.name = "faal-pgd" + std::to_string(o.steps);
    return c;
}

MethodOptions trades_options(const MethodOptions& o) {
    MethodOptions t = o;
    t.beta = static_cast<float>(o.faal.trades_beta);
    t.trades_form = TradesForm::Original;
    t.attack_mode = o.attack_mode == ModeChoice::Default ? ModeChoice::Eval : o.attack_mode;
    return t;
}
}  // namespace

Faal::Faal(FaalLoss loss, const MethodOptions& o) : loss_(loss), o_(o), attack_(faal_attack_config(o)) {
    if (!(o.faal.radius >= 0) || !std::isfinite(o.faal.radius))
        throw std::invalid_argument("faal options: --faal-radius must be a finite number >= 0, got " + std::to_string(o.faal.radius));
    if (!(o.faal.trades_beta >= 0) || !std::isfinite(o.faal.trades_beta))
        throw std::invalid_argument("faal options: --faal-beta must be a finite number >= 0");
}

std::string Faal::describe() const {
    std::ostringstream os;
    os << name() << ": ";
    if (loss_ == FaalLoss::At) {
        const auto& c = attack_.settings();
        os << "PGD-" << c.steps << " Linf CE, eps " << over_255(c.eps) << ", alpha " << over_255(c.alpha) << ", "
           << (c.start == attacks::RandomStart::None ? "no random start" : "uniform start") << ", attack in "
           << attacks::mode_name(c.mode) << " mode; loss K*p_y/B * CE(f(x_adv))";
    } else {
        os << "TRADES KL ascent, " << o_.steps << " sign steps, eps " << over_255(o_.eps) << ", alpha "
           << over_255(o_.resolved_alpha()) << ", attack in " << attacks::mode_name(resolve_mode(trades_options(o_).attack_mode, attacks::ModelMode::Eval))
           << " mode; loss K*p_y/B * (CE(f(x)) + " << o_.faal.trades_beta << "*KL(p(x)||p(x_adv)))";
    }
    os << "; p = argmax over the simplex of sum_k c_k p_k with KL(uniform||p) <= " << o_.faal.radius << ", c_k = "
       << (o_.faal.batch_counts ? "n_k * " : "") << "class mean of max_{j!=y} softmax_j - softmax_y on x_adv"
       << "; clean train-mode forward before the step: " << (o_.faal.clean_forward ? "yes" : "no");
    return os.str();
}

void Faal::ensure_classes(int c) {
    if (classes_ == c) return;
    if (classes_ != 0) throw std::invalid_argument("faal: class count changed from " + std::to_string(classes_) + " to " + std::to_string(c));
    classes_ = c;
    weight_.assign(c, 1.0);
    margin_.assign(c, 0.0);
    weight_sum_.assign(c, 0.0);
    batches_ = 0;
}

std::vector<double> Faal::class_weights(const std::vector<float>& probs, const std::vector<int32_t>& labels, int classes) {
    ensure_classes(classes);
    std::vector<int64_t> counts;
    margin_ = faal_class_margins(probs, labels, classes, counts);
    std::vector<double> c = margin_;
    if (o_.faal.batch_counts)
        for (int k = 0; k < classes; ++k) c[k] *= static_cast<double>(counts[k]);
    const std::vector<double> p = faal_dro_weights(c, o_.faal.radius);
    for (int k = 0; k < classes; ++k) {
        weight_[k] = static_cast<double>(classes) * p[k];
        weight_sum_[k] += weight_[k];
    }
    ++batches_;
    return weight_;
}

BatchLoss Faal::batch_loss(const BatchInput& in) {
    Tensor x_adv;
    if (loss_ == FaalLoss::At) {
        x_adv = attack_.run(in.model, in.images, in.labels, in.rng).x_adv;
    } else {
        const Trades trades(trades_options(o_));
        const Tensor start = o_.random_start ? noisy_start(in.images, kStartSigma, in.rng) : in.images.detach().clone();
        x_adv = trades.adversarial(in.model, in.images, start, in.host_labels);
    }
    in.model.train();
    const Tensor adv = in.model(x_adv.detach());
    Tensor nat;
    if (loss_ == FaalLoss::Trades) {
        nat = in.model(in.images);
    } else if (o_.faal.clean_forward) {
        NoGradGuard no_grad;   // unused by the AT loss: only BN's running statistics see the clean batch
        in.model(in.images);
    }
    const std::vector<double> w = class_weights(softmax(adv.detach()).to_vector(), in.host_labels, in.num_classes);
    const int64_t b = in.images.size(0);
    std::vector<float> coef(b);
    for (int64_t i = 0; i < b; ++i) coef[i] = static_cast<float>(w[in.host_labels[i]] / static_cast<double>(b));
    const Tensor scale = Tensor::from_vector(coef, {b}, in.images.device());
    const Tensor terms = loss_ == FaalLoss::At
        ? cross_entropy(adv, in.labels, {0.f, Tensor(), Reduction::None})
        : add(cross_entropy(nat, in.labels, {0.f, Tensor(), Reduction::None}),
              mul(kl_div(nat, adv, Reduction::None), static_cast<float>(o_.faal.trades_beta)));
    return {mul(terms, scale), adv.detach()};
}

void Faal::start_epoch(const EpochStart&) {
    std::fill(weight_sum_.begin(), weight_sum_.end(), 0.0);
    batches_ = 0;
}

std::vector<std::vector<double>> Faal::class_state() const {
    if (!classes_) return {{}, {}, {}};
    std::vector<double> mean(classes_, 1.0);
    if (batches_)
        for (int k = 0; k < classes_; ++k) mean[k] = weight_sum_[k] / static_cast<double>(batches_);
    return {weight_, margin_, mean};
}

void Faal::save_state(std::map<std::string, Tensor>&, nn::Metadata& meta) const {
    meta["faal_classes"] = std::to_string(classes_);
    if (!classes_) return;
    put_vector(meta, "faal_weight", weight_);
    put_vector(meta, "faal_margin", margin_);
    put_vector(meta, "faal_weight_sum", weight_sum_);
    meta["faal_batches"] = std::to_string(batches_);
}

void Faal::load_state(const std::map<std::string, Tensor>&, const nn::Metadata& meta) {
    const auto it = meta.find("faal_classes");
    if (it == meta.end()) throw std::invalid_argument("method state: missing 'faal_classes' (not a FAAL run?)");
    const int c = std::stoi(it->second);
    classes_ = 0;
    if (!c) return;
    ensure_classes(c);
    weight_ = get_vector(meta, "faal_weight", c);
    margin_ = get_vector(meta, "faal_margin", c);
    weight_sum_ = get_vector(meta, "faal_weight_sum", c);
    batches_ = get_vector<int64_t>(meta, "faal_batches", 1).at(0);
}

}  // namespace cw::train
