#include "fairness/methods/fair_tat.h"

#include <sstream>
#include <stdexcept>

#include "attacks/early_stop_pgd.h"
#include "attacks/pgd.h"
#include "fairness/methods/class_calibration.h"
#include "fairness/methods/target_prior.h"
#include "train/methods/method_util.h"

namespace cw::train {

namespace {
std::string over_beta(float b) {
    std::ostringstream os;
    os << b;
    return os.str();
}
}  // namespace

FairTat::FairTat(const MethodOptions& o, Base base)
    : o_(o.cfa), eps_(o.eps), base_(base),
      clean_forward_(resolve_clean_forward(o.clean_forward, base == Base::At ? CleanForward::Train : CleanForward::Off)) {
    if (o_.tat_begin < 0)
        throw std::invalid_argument("fair_tat: --fair-tat-begin must be >= 0, got " + std::to_string(o_.tat_begin));
    if (o_.tat_lambda < 0)
        throw std::invalid_argument("fair_tat: --fair-tat-lambda must be >= 0, got " + std::to_string(o_.tat_lambda));
    if (!(o_.tat_floor > 0))
        throw std::invalid_argument("fair_tat: --fair-tat-floor must be > 0 (every class must stay drawable), got " +
                                    std::to_string(o_.tat_floor));
    steps_ = o.steps;
    alpha_ = o.resolved_alpha();
    const attacks::ModelMode mode =
        resolve_mode(o.attack_mode, base == Base::Trades ? attacks::ModelMode::Eval : attacks::ModelMode::Train);
    if (base == Base::Fat) {
        if (!o.random_start)
            throw std::invalid_argument("fair_tat_fat: the early-stopped PGD always starts from U(-eps, eps); "
                                        "turning the random start off is not supported");
        attacks::EarlyStopPgdConfig c = attacks::fat_cfa_config(o.eps);
        c.alpha = alpha_;
        c.steps = steps_;
        c.tau = tau_ = o.fat_tau >= 0 ? o.fat_tau : 3;
        c.omega = o.fat_omega >= 0 ? o.fat_omega : 0.f;
        c.targeted = true;
        c.mode = mode;
        c.name = "fair_tat_fat-pgd" + std::to_string(steps_) + "-tau" + std::to_string(tau_) + "-targeted";
        attack_ = std::make_unique<attacks::EarlyStopPgd>(c);
    } else {
        attacks::PgdConfig c;
        c.eps = o.eps;
        c.alpha = alpha_;
        c.steps = steps_;
        normal_start_ = base == Base::Trades && o.random_start;   // TRADES' x + 0.001·N(0, I)
        c.start = !o.random_start ? attacks::RandomStart::None
                  : normal_start_ ? attacks::RandomStart::Normal
                                  : attacks::RandomStart::Uniform;
        c.start_sigma = 0.001f;
        c.targeted = true;
        c.mode = mode;
        c.name = "fair_tat-pgd" + std::to_string(steps_) + "-targeted";
        attack_ = std::make_unique<attacks::Pgd>(c);
    }
    if (base == Base::Trades) {
        MethodOptions t = o;
        t.trades_form = TradesForm::CfaNormalised;
        t.beta = beta_ = o.beta >= 0 ? o.beta : 6.f;
        trades_ = std::make_unique<Trades>(t);
    }
}

std::string FairTat::describe() const {
    std::ostringstream os;
    os << name() << ": targeted " << (base_ == Base::Fat ? "early-stopped (tau " + std::to_string(tau_) + ", stops on argmax != y) " : "")
       << "PGD-" << steps_ << " Linf CE toward t_i != y_i, eps " << over_255(eps_) << ", alpha " << over_255(alpha_)
       << ", start " << (normal_start_ ? "x + 0.001*N(0,I)" : "uniform") << ", attack in "
       << attacks::mode_name(attack_->mode()) << " mode; loss "
       << (trades_ ? "CFA-form TRADES on x' (reconstruction: the code ignores the target with TRADES; beta " +
                         over_beta(beta_) + ")"
           : base_ == Base::Fat ? std::string("mean CE(f(x_adv), y) (reconstruction: the code ignores the target with FAT)")
                                : std::string("mean CE(f(x_adv), y)"))
       << "; targets ";
    if (o_.tat_random_target)
        os << "uniform every epoch (random-target ablation)";
    else if (o_.tat_prior == TargetPrior::Softmax)
        os << "~ softmax(" << o_.tat_softmax_scale << "*CFP) of the previous epoch (code)";
    else
        os << "~ max(CFP, " << o_.tat_floor << ") of the previous epoch (proportional, paper wording)";
    os << ", uniform in epoch 0; eps scaling " << (o_.tat_eps_scaling ? "on" : "off") << " eps_k = (" << o_.tat_lambda
       << " + r_k)*eps; from epoch " << o_.tat_begin << "; clean forward after step: " << clean_forward_name(clean_forward_);
    return os.str();
}

void FairTat::ensure_classes(int num_classes) {
    if (!class_eps_.empty() || num_classes <= 0) return;
    class_eps_.assign(num_classes, eps_);
    cfp_.assign(num_classes, 0.0);
    prior_.assign(num_classes, 1.0 / num_classes);
}

std::vector<int32_t> FairTat::targets(const std::vector<int32_t>& labels, int64_t epoch, Rng& rng) {
    const int c = static_cast<int>(prior_.size());
    std::vector<int32_t> t(labels.size());
    const bool uniform = epoch == 0 || o_.tat_random_target;
    for (size_t i = 0; i < labels.size(); ++i)
        t[i] = uniform ? draw_uniform_target(c, labels[i], rng) : draw_target(prior_, labels[i], rng);
    return t;
}

BatchLoss FairTat::batch_loss(const BatchInput& in) {
    if (in.num_classes < 2) throw std::invalid_argument("fair_tat: needs at least 2 classes for targets != y");
    ensure_classes(in.num_classes);
    attacks::PerSample ps;
    ps.targets = targets(in.host_labels, in.epoch, in.rng);
    ps.eps = attacks::class_wise(in.host_labels, class_eps_);
    const Tensor x_adv = attack_->run(in.model, in.images, in.labels, in.rng, ps).x_adv;
    if (trades_) return trades_->outer_loss(in.model, in.images, x_adv, in.labels, in.host_labels);
    in.model.train();
    const Tensor logits = in.model(x_adv);
    return {per_sample_mean_ce(logits, in.labels), logits.detach()};
}

EpochDecision FairTat::end_epoch(const EpochEnd& end) {
    ensure_classes(end.train.num_classes());
    const std::vector<double> cfp = end.train.cfp();
    cfp_ = float_rounded(cfp);
    if (end.epoch + 1 >= o_.tat_begin) {
        if (o_.tat_eps_scaling) class_eps_ = calibrated(o_.tat_lambda, end.train.accuracy_times_classes_over_n(), eps_);
        if (!o_.tat_random_target) prior_ = float_rounded(target_prior(cfp, o_.tat_prior, o_.tat_softmax_scale, o_.tat_floor));
    }
    return {};
}

std::vector<std::vector<double>> FairTat::class_state() const { return {as_double(class_eps_), cfp_, prior_}; }

void FairTat::save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const {
    meta["classes"] = std::to_string(class_eps_.size());
    if (class_eps_.empty()) return;
    tensors["eps"] = class_vector_tensor(as_double(class_eps_));
    tensors["cfp"] = class_vector_tensor(cfp_);
    tensors["target_prob"] = class_vector_tensor(prior_);
}

void FairTat::load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) {
    const auto it = meta.find("classes");
    const int c = it == meta.end() ? 0 : std::stoi(it->second);
    if (c <= 0) return;
    const auto eps = read_class_vector(tensors, "eps", c, name());
    class_eps_.assign(eps.begin(), eps.end());
    cfp_ = read_class_vector(tensors, "cfp", c, name());
    prior_ = read_class_vector(tensors, "target_prob", c, name());
}

}  // namespace cw::train
