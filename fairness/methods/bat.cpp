#include "fairness/methods/bat.h"

#include <sstream>
#include <stdexcept>

#include "engine/ops.h"
#include "fairness/methods/longtail_losses.h"
#include "train/methods/method_util.h"

namespace cw::train {

namespace {
ClasswiseEarlyStopConfig attack_config(const MethodOptions& o) {
    if (!o.random_start) throw std::invalid_argument("bat: --no-random-start is not supported (FAT-style uniform start)");
    if (o.longtail.bat_tau_max < 0)
        throw std::invalid_argument("bat: --bat-tau-max must be >= 0, got " + std::to_string(o.longtail.bat_tau_max));
    if (!(o.longtail.bat_mu >= 0))
        throw std::invalid_argument("bat: --bat-mu must be >= 0, got " + std::to_string(o.longtail.bat_mu));
    ClasswiseEarlyStopConfig c;
    c.eps = o.eps;
    c.alpha = o.resolved_alpha();
    c.steps = o.steps;
    c.mode = resolve_mode(o.attack_mode, attacks::ModelMode::Train);
    return c;
}
}  // namespace

Bat::Bat(const MethodOptions& o)
    : attack_(attack_config(o)), beta_(o.beta >= 0 ? o.beta : 6.f), mu_(o.longtail.bat_mu),
      tau_max_(o.longtail.bat_tau_max), form_(o.trades_form) {}

std::string Bat::describe() const {
    std::ostringstream os;
    os << "bat: RECONSTRUCTION of BAT from its abstract (docs/protocols/bat.md; not comparable to published numbers): "
       << "class-wise early-stopped PGD-" << attack_.steps << " Linf CE (CFA counter), eps " << over_255(attack_.eps)
       << ", alpha " << over_255(attack_.alpha) << ", uniform start, attack in " << attacks::mode_name(attack_.mode)
       << " mode, tau_k = round(" << tau_max_ << " * t_k) from the previous epoch's training robust accuracy; loss "
       << (form_ == TradesForm::Original ? "TRADES CE + beta*KL" : "CFA-normalised TRADES ((1-b)*CE + b*KL)")
       << ", beta " << beta_ << ", + mu*R_u (KL(uniform || softmax over classes != y) at x'), mu " << mu_;
    return os.str();
}

void Bat::ensure_classes(int num_classes) {
    if (static_cast<int>(tau_.size()) == num_classes) return;
    correct_.assign(static_cast<size_t>(num_classes), 0);
    seen_.assign(static_cast<size_t>(num_classes), 0);
    tau_.assign(static_cast<size_t>(num_classes), tau_max_);
    have_stats_ = false;
}

std::vector<double> Bat::robust_accuracy() const {
    std::vector<double> t;
    for (size_t k = 0; k < seen_.size(); ++k)
        t.push_back(seen_[k] > 0 ? static_cast<double>(correct_[k]) / static_cast<double>(seen_[k]) : 0.0);
    return t;
}

void Bat::start_epoch(const EpochStart&) {
    if (have_stats_) tau_ = bat_class_tau(robust_accuracy(), tau_max_);
}

EpochDecision Bat::end_epoch(const EpochEnd& end) {
    ensure_classes(end.train.num_classes());
    correct_ = end.train.correct;
    seen_ = end.train.seen;
    have_stats_ = true;
    return {};
}

BatchLoss Bat::batch_loss(const BatchInput& in) {
    ensure_classes(in.num_classes);
    const Tensor x_adv = classwise_early_stop_pgd(in.model, in.images, in.labels, in.host_labels, tau_, attack_, in.rng);
    in.model.train();
    const Tensor nat = in.model(in.images);
    const Tensor adv = in.model(x_adv);
    const float b = static_cast<float>(in.images.size(0));
    const float s = form_ == TradesForm::Original ? 1.f : 1.f / (1.f + beta_);
    const Tensor ce = cross_entropy(nat, in.labels, {0.f, Tensor(), Reduction::None});
    const Tensor kl = kl_div(nat, adv, Reduction::None);
    const Tensor ru = uniform_target_kl(adv, in.host_labels);
    const Tensor per_sample = mul(add(add(mul(ce, s), mul(kl, s * beta_)), mul(ru, mu_)), 1.f / b);
    return {per_sample, adv.detach()};
}

std::vector<std::vector<double>> Bat::class_state() const {
    return {std::vector<double>(tau_.begin(), tau_.end()), robust_accuracy()};
}

void Bat::save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const {
    if (tau_.empty()) return;
    const int64_t c = static_cast<int64_t>(tau_.size());
    tensors["correct"] = Tensor::from_vector(std::vector<float>(correct_.begin(), correct_.end()), {c});
    tensors["seen"] = Tensor::from_vector(std::vector<float>(seen_.begin(), seen_.end()), {c});
    tensors["tau"] = Tensor::from_vector(std::vector<float>(tau_.begin(), tau_.end()), {c});
    meta["have_stats"] = have_stats_ ? "1" : "0";
}

void Bat::load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) {
    if (tensors.find("tau") == tensors.end()) return;   // saved before the first batch
    const std::vector<float> tau = tensors.at("tau").to_vector();
    auto get = [&](const std::string& key) {
        const auto t = tensors.find(key);
        if (t == tensors.end()) throw std::runtime_error("bat state: tensor '" + key + "' missing");
        const std::vector<float> v = t->second.to_vector();
        if (v.size() != tau.size())
            throw std::runtime_error("bat state: tensor '" + key + "' has " + std::to_string(v.size()) +
                                     " entries, expected " + std::to_string(tau.size()));
        return v;
    };
    const std::vector<float> correct = get("correct"), seen = get("seen");
    correct_.assign(correct.begin(), correct.end());
    seen_.assign(seen.begin(), seen.end());
    tau_.assign(tau.begin(), tau.end());
    const auto h = meta.find("have_stats");
    have_stats_ = h != meta.end() && h->second == "1";
}

}  // namespace cw::train
