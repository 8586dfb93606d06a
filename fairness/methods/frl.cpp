#include "fairness/methods/frl.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "fairness/methods/validation_pass.h"
#include "train/state_vectors.h"
#include "fairness/methods/weighted_trades.h"
#include "train/methods/method_util.h"
#include "train/methods/trades.h"

namespace cw::train {

namespace {
MethodOptions with_resolved_frl(FrlVariant v, MethodOptions o) {
    o.frl = frl_resolved(v, o.frl);
    return o;
}
attacks::PgdConfig validation_pgd(const MethodOptions& o) {
    attacks::PgdConfig c;
    c.eps = o.eps;
    c.alpha = o.eps / 4;   // 2/255 at 8/255
    c.steps = o.frl.val_steps;
    c.start = attacks::RandomStart::Uniform;
    c.mode = attacks::ModelMode::Eval;
    c.name = "frl-val-pgd" + std::to_string(o.frl.val_steps);
    return c;
}
FrlUpdateRule rule_for(FrlVariant v, const FrlOptions& f) {
    FrlUpdateRule r;
    r.update_nat = true;   // clean-error violations are always handled by reweighting CE
    r.update_bdy = v != FrlVariant::Remargin;
    r.update_m = v != FrlVariant::Reweight;
    r.r1 = f.r1;
    r.r2 = f.r2;
    r.lim = f.lim;
    return r;
}
void check(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("frl options: " + what);
}
}  // namespace

FrlOptions frl_resolved(FrlVariant v, FrlOptions f) {
    const bool rm = v == FrlVariant::Remargin, rwrm = v == FrlVariant::ReweightRemargin;
    auto fill = [](double& x, double value) {
        if (x < 0) x = value;
    };
    fill(f.tau1, rwrm ? 0.07 : 0.10);   // frlrmrw.py --bound0 0.07; frlrw.py and frlrm.py 0.1
    fill(f.tau2, rwrm ? 0.07 : 0.10);   // --bound1, the same
    fill(f.beta, rm ? 1.0 : 1.5);       // frlrm.py --beta 1.0; the others 1.5
    fill(f.lim, rm ? 0.3 : 0.5);        // frlrm.py --lim 0.3; the others 0.5
    fill(f.r2, rm ? 0.1 : 0.2);         // --rate2
    fill(f.m_hi, rm ? 2.5 : 3.0);       // the clamp of exp(2·λ_m) in utils_frl1.py / utils_frl2.py
    return f;
}

Frl::Frl(FrlVariant variant, const MethodOptions& o)
    : variant_(variant), o_(with_resolved_frl(variant, o)), rule_(rule_for(variant, o_.frl)), m_hi_(o_.frl.m_hi),
      step_(o.frl.attack_step >= 0 ? o.frl.attack_step : o.eps / 4), val_attack_(validation_pgd(o)) {
    const FrlOptions& f = o_.frl;
    check(f.lim > 0, "--frl-lim must be > 0");
    check(f.m_lo > 0 && f.m_lo <= m_hi_, "--frl-m-lo must be in (0, m_hi]");
    check(f.val_steps >= 1, "--frl-val-steps must be >= 1");
    check(f.beta >= 0, "--frl-beta must be >= 0");
}

std::string Frl::name() const {
    switch (variant_) {
        case FrlVariant::Reweight: return "frl_rw";
        case FrlVariant::Remargin: return "frl_rm";
        default: return "frl_rwrm";
    }
}

std::string Frl::describe() const {
    std::ostringstream os;
    os << name() << ": FRL " << (variant_ == FrlVariant::Reweight ? "reweight" : variant_ == FrlVariant::Remargin ? "remargin" : "reweight+remargin")
       << "; per epoch PGD-" << o_.frl.val_steps << " on the validation split (eps " << over_255(o_.eps) << ", alpha eps/4, eval)"
       << ", tau1 " << o_.frl.tau1 << ", tau2 " << o_.frl.tau2 << ", r1 " << rule_.r1 << " (halved every "
       << o_.frl.halve_every << " epochs)";
    if (rule_.update_m) os << ", r2 " << rule_.r2 << ", eps multiplier in [" << o_.frl.m_lo << ", " << m_hi_ << "]";
    os << ", lim " << rule_.lim << "; loss "
       << (variant_ == FrlVariant::Remargin ? "(w_nat*CE + beta*w_bdy*KL)/sum(w_nat + w_bdy)"
                                            : "w_nat*CE/sum w_nat + beta*w_bdy*KL/sum w_bdy")
       << ", beta " << o_.frl.beta
       << "; TRADES attack " << o_.steps << " steps, step "
       << (variant_ == FrlVariant::ReweightRemargin && o_.frl.attack_step < 0 ? std::string("max_b(eps_b)/4") : over_255(step_));
    return os.str();
}

void Frl::ensure_classes(int c) {
    if (classes_ == c) return;
    if (classes_ != 0) throw std::invalid_argument("frl: class count changed from " + std::to_string(classes_) + " to " + std::to_string(c));
    classes_ = c;
    lambda_ = {std::vector<double>(c, 0.0), std::vector<double>(c, 0.0), std::vector<double>(c, 0.0)};
    violations_ = {std::vector<double>(c, 0.0), std::vector<double>(c, 0.0)};
    refresh_costs();
}

void Frl::refresh_costs() {
    w_nat_ = frl_costs(lambda_.nat);
    w_bdy_ = frl_costs(lambda_.bdy);
    m_ = rule_.update_m ? frl_eps_multipliers(lambda_.m, o_.frl.m_lo, m_hi_) : std::vector<double>(classes_, 1.0);
}

void Frl::update(int64_t epoch, const std::vector<double>& acc_nat, const std::vector<double>& acc_rob,
                 double overall_nat, double overall_rob) {
    ensure_classes(static_cast<int>(acc_nat.size()));
    violations_ = frl_violations(frl_errors(acc_nat, acc_rob, overall_nat, overall_rob), o_.frl.tau1, o_.frl.tau2);
    FrlUpdateRule rule = rule_;
    rule.r1 = r1_used_ = frl_r1_at(rule_.r1, epoch, o_.frl.halve_every);
    lambda_ = frl_update(lambda_, violations_, rule);
    refresh_costs();
}

void Frl::start_epoch(const EpochStart& start) {
    const EvalSplit& val = require_validation(start.validation, name());
    const int c = classes_ ? classes_ : output_classes(start.model, val);
    const SplitScores s = any_correct_scores(start.model, val, val_attack_, c, epoch_seed(start.validation.seed, start.epoch));
    update(start.epoch, s.clean.per_class_accuracy, s.robust.per_class_accuracy, s.clean.accuracy, s.robust.accuracy);
}

BatchLoss Frl::batch_loss(const BatchInput& in) {
    ensure_classes(in.num_classes);
    const AttackSettings a = attack_settings(in.host_labels);
    MethodOptions t = o_;
    t.alpha = a.step;
    t.beta = static_cast<float>(o_.frl.beta);
    t.attack_mode = ModeChoice::Eval;
    Trades attack(t);
    attack.set_class_eps(a.eps_per_class);
    const Tensor start = o_.random_start ? noisy_start(in.images, 0.001f, in.rng) : in.images.detach().clone();
    const Tensor x_adv = attack.adversarial(in.model, in.images, start, in.host_labels);

    return weighted_trades_loss(in.model, in.images, x_adv, in.labels, loss_coefficients(in.host_labels));
}

Frl::AttackSettings Frl::attack_settings(const std::vector<int32_t>& labels) const {
    AttackSettings a{std::vector<float>(classes_), step_};
    for (int k = 0; k < classes_; ++k) a.eps_per_class[k] = static_cast<float>(o_.eps * m_[k]);
    if (variant_ == FrlVariant::ReweightRemargin && o_.frl.attack_step < 0) {
        float biggest = 0;
        for (float e : class_lookup(m_, labels, "frl eps_mult")) biggest = std::max(biggest, o_.eps * e);
        a.step = biggest / 4;
    }
    return a;
}

TradesCoefficients Frl::loss_coefficients(const std::vector<int32_t>& labels) const {
    TradesCoefficients c{class_lookup(w_nat_, labels, "frl w_nat"), class_lookup(w_bdy_, labels, "frl w_bdy")};
    double sum_nat = 0, sum_bdy = 0;
    for (size_t i = 0; i < labels.size(); ++i) sum_nat += c.ce[i], sum_bdy += c.kl[i];
    // Reweight (frlrw.py) and reweight+remargin (frlrmrw.py): Σw0·CE/Σw0 + β·Σw1·KL/Σw1. Remargin (frlrm.py):
    // one normaliser, Σ(w0·CE + β·w1·KL)/Σ(w0 + w1).
    if (variant_ == FrlVariant::Remargin) sum_nat = sum_bdy = sum_nat + sum_bdy;
    for (size_t i = 0; i < labels.size(); ++i) {
        c.ce[i] = static_cast<float>(c.ce[i] / sum_nat);
        c.kl[i] = static_cast<float>(o_.frl.beta * c.kl[i] / sum_bdy);
    }
    return c;
}

std::vector<std::string> Frl::class_state_names() const {
    return {"lambda_nat", "lambda_bdy", "lambda_m", "w_nat", "w_bdy", "eps_mult", "violation_nat", "violation_bdy"};
}

std::vector<std::vector<double>> Frl::class_state() const {
    return {lambda_.nat, lambda_.bdy, lambda_.m, w_nat_, w_bdy_, m_, violations_.nat, violations_.bdy};
}

void Frl::save_state(std::map<std::string, Tensor>&, nn::Metadata& meta) const {
    meta["frl_classes"] = std::to_string(classes_);
    if (!classes_) return;
    put_vector(meta, "frl_lambda_nat", lambda_.nat);
    put_vector(meta, "frl_lambda_bdy", lambda_.bdy);
    put_vector(meta, "frl_lambda_m", lambda_.m);
    put_vector(meta, "frl_violation_nat", violations_.nat);
    put_vector(meta, "frl_violation_bdy", violations_.bdy);
}

void Frl::load_state(const std::map<std::string, Tensor>&, const nn::Metadata& meta) {
    const auto it = meta.find("frl_classes");
    if (it == meta.end()) throw std::invalid_argument("method state: missing 'frl_classes' (not an FRL run?)");
    const int c = std::stoi(it->second);
    classes_ = 0;
    if (!c) return;
    ensure_classes(c);
    lambda_ = {get_vector(meta, "frl_lambda_nat", c), get_vector(meta, "frl_lambda_bdy", c), get_vector(meta, "frl_lambda_m", c)};
    violations_ = {get_vector(meta, "frl_violation_nat", c), get_vector(meta, "frl_violation_bdy", c)};
    refresh_costs();
}

}  // namespace cw::train
