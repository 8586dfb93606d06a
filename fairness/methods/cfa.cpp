#include "fairness/methods/cfa.h"

#include <sstream>
#include <stdexcept>

#include "fairness/methods/class_calibration.h"
#include "train/methods/method_util.h"
#include "train/methods/pgd_at.h"

namespace cw::train {

namespace {
float paper_lambda(CfaBase b) { return b == CfaBase::At ? 0.5f : b == CfaBase::Trades ? 0.3f : 0.7f; }
}  // namespace

Cfa::Cfa(CfaBase base, const MethodOptions& o)
    : base_(base), eps_(o.eps), beta_(o.beta >= 0 ? o.beta : 6.f),
      lambda_eps_(o.cfa.lambda_eps >= 0 ? o.cfa.lambda_eps : paper_lambda(base)), lambda_beta_(o.cfa.lambda_beta),
      begin_(o.cfa.begin), ccm_(o.cfa.ccm), ccr_(o.cfa.ccr && base == CfaBase::Trades),
      clean_forward_(resolve_clean_forward(o.clean_forward, CleanForward::Train)) {
    if (o.cfa.begin < 0) throw std::invalid_argument("cfa: --cfa-begin must be >= 0, got " + std::to_string(o.cfa.begin));
    if (o.cfa.lambda_beta < 0)
        throw std::invalid_argument("cfa: --cfa-lambda-beta must be >= 0, got " + std::to_string(o.cfa.lambda_beta));
    MethodOptions b = o;
    if (base == CfaBase::At) {
        at_attack_ = std::make_unique<attacks::Pgd>(pgd_at_attack_config(o, "cfa_at-pgd" + std::to_string(o.steps)));
    } else if (base == CfaBase::Trades) {
        b.trades_form = TradesForm::CfaNormalised;   // CFA's TRADES, with or without CCR
        b.beta = beta_;
        trades_ = std::make_unique<Trades>(b);
    } else {
        b.fat_semantics = attacks::FatSemantics::Cfa;
        fat_ = std::make_unique<Fat>(b);
    }
}

std::string Cfa::name() const {
    return base_ == CfaBase::At ? "cfa_at" : base_ == CfaBase::Trades ? "cfa_trades" : "cfa_fat";
}

std::string Cfa::describe() const {
    std::ostringstream os;
    os << name() << ": CFA over ";
    if (base_ == CfaBase::At) {
        const auto& c = at_attack_->settings();
        os << "PGD-AT (PGD-" << c.steps << " Linf CE, alpha " << over_255(c.alpha) << ", attack in "
           << attacks::mode_name(c.mode) << " mode)";
    } else {
        os << "[" << (trades_ ? trades_->describe() : fat_->describe()) << "]";
    }
    os << "; clean forward after step: " << clean_forward_name(clean_forward_);
    os << "; eps " << over_255(eps_) << "; CCM " << (ccm_ ? "on" : "off") << " eps_k = (" << lambda_eps_
       << " + t_k)*eps";
    if (base_ == CfaBase::Trades)
        os << "; CCR " << (ccr_ ? "on" : "off") << " beta_k = (" << lambda_beta_ << " + t_k)*" << beta_;
    os << "; from epoch " << begin_ << " (t_k of the previous epoch, correct_k*C/N)";
    return os.str();
}

void Cfa::ensure_classes(int num_classes) {
    if (!class_eps_.empty() || num_classes <= 0) return;
    class_eps_.assign(num_classes, eps_);
    class_beta_.assign(num_classes, beta_);
    t_.assign(num_classes, 0.0);
    push_to_base();
}

void Cfa::push_to_base() {
    if (trades_) {
        trades_->set_class_eps(class_eps_);
        trades_->set_class_beta(class_beta_);
    }
    if (fat_) fat_->set_class_eps(class_eps_);
}

BatchLoss Cfa::batch_loss(const BatchInput& in) {
    ensure_classes(in.num_classes);
    if (trades_) return trades_->batch_loss(in);
    if (fat_) return fat_->batch_loss(in);
    attacks::PerSample ps;
    ps.eps = attacks::class_wise(in.host_labels, class_eps_);
    const Tensor x_adv = at_attack_->run(in.model, in.images, in.labels, in.rng, ps).x_adv;
    in.model.train();
    const Tensor logits = in.model(x_adv);
    return {per_sample_mean_ce(logits, in.labels), logits.detach()};
}

EpochDecision Cfa::end_epoch(const EpochEnd& end) {
    ensure_classes(end.train.num_classes());
    const std::vector<double> t = end.train.accuracy_times_classes_over_n();
    t_ = float_rounded(t);
    // The values for epoch e+1 come from epoch e's t_k, once e+1 reaches begin.
    if (end.epoch + 1 >= begin_) {
        if (ccm_) class_eps_ = calibrated(lambda_eps_, t, eps_);
        if (ccr_) class_beta_ = calibrated(lambda_beta_, t, beta_);
        push_to_base();
    }
    return {};
}

// CFA's train_epoch logs training clean accuracy with a train-mode forward after every step, whatever the base
// (AT, TRADES and FAT alike), so BN's running statistics also see the clean batch.
CleanForward Cfa::clean_forward_after_step() const { return clean_forward_; }

std::vector<std::string> Cfa::class_state_names() const {
    if (base_ == CfaBase::Trades) return {"eps", "beta", "t"};
    return {"eps", "t"};
}

std::vector<std::vector<double>> Cfa::class_state() const {
    if (base_ == CfaBase::Trades) return {as_double(class_eps_), as_double(class_beta_), t_};
    return {as_double(class_eps_), t_};
}

void Cfa::save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const {
    meta["classes"] = std::to_string(class_eps_.size());
    if (class_eps_.empty()) return;
    tensors["eps"] = class_vector_tensor(as_double(class_eps_));
    tensors["beta"] = class_vector_tensor(as_double(class_beta_));
    tensors["t"] = class_vector_tensor(t_);
}

void Cfa::load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) {
    const auto it = meta.find("classes");
    const int c = it == meta.end() ? 0 : std::stoi(it->second);
    if (c <= 0) return;
    const auto eps = read_class_vector(tensors, "eps", c, name());
    const auto beta = read_class_vector(tensors, "beta", c, name());
    class_eps_.assign(eps.begin(), eps.end());
    class_beta_.assign(beta.begin(), beta.end());
    t_ = read_class_vector(tensors, "t", c, name());
    push_to_base();
}

}  // namespace cw::train
