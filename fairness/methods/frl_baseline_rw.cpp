#include "fairness/methods/frl_baseline_rw.h"

#include <cmath>
#include <stdexcept>

#include "engine/ops.h"
#include "fairness/methods/frl_update.h"
#include "fairness/methods/validation_pass.h"
#include "train/state_vectors.h"
#include "fairness/methods/weighted_trades.h"
#include "train/methods/method_util.h"

namespace cw::train {

namespace {
attacks::PgdConfig pgd(const MethodOptions& o, bool validation) {
    attacks::PgdConfig c;
    c.eps = o.eps;
    c.alpha = validation ? o.eps / 4 : o.resolved_alpha();
    c.steps = validation ? o.frl.val_steps : o.steps;
    c.start = validation || o.random_start ? attacks::RandomStart::Uniform : attacks::RandomStart::None;
    c.mode = validation ? attacks::ModelMode::Eval : resolve_mode(o.attack_mode, attacks::ModelMode::Train);
    c.name = validation ? "frl-val-pgd" + std::to_string(c.steps) : "frl_baseline_rw-pgd" + std::to_string(c.steps);
    return c;
}
}  // namespace

FrlBaselineReweight::FrlBaselineReweight(const MethodOptions& o)
    : o_(o), train_attack_(pgd(o, false)), val_attack_(pgd(o, true)),
      clean_forward_(resolve_clean_forward(o.clean_forward, CleanForward::Train)) {
    if (o_.frl.lim < 0) o_.frl.lim = 0.5;   // the variants' default (no script exists for this baseline)
    if (!(o_.frl.lim > 0)) throw std::invalid_argument("frl options: --frl-lim must be > 0");
}

std::string FrlBaselineReweight::describe() const {
    return "frl_baseline_rw (reconstruction of FRL's Baseline Reweight): PGD-AT, PGD-" + std::to_string(o_.steps) +
           " eps " + over_255(o_.eps) + "; loss sum w(y)*CE(x_adv)/sum w(y); per epoch PGD-" +
           std::to_string(o_.frl.val_steps) + " on the validation split, tau " + std::to_string(o_.frl.baseline_tau) +
           ", r1 " + std::to_string(o_.frl.r1) + ", lim " + std::to_string(o_.frl.lim);
}

void FrlBaselineReweight::ensure_classes(int c) {
    if (classes_ == c) return;
    if (classes_ != 0) throw std::invalid_argument("frl_baseline_rw: class count changed");
    classes_ = c;
    lambda_.assign(c, 0.0);
    violation_.assign(c, 0.0);
    weight_ = frl_costs(lambda_);
}

void FrlBaselineReweight::update(int64_t epoch, const std::vector<double>& acc_rob, double overall_rob) {
    ensure_classes(static_cast<int>(acc_rob.size()));
    for (int i = 0; i < classes_; ++i)   // γ_rob(i) = e_rob(i) − E_rob − τ = overall − A_rob(i) − τ
        violation_[i] = std::isnan(acc_rob[i]) ? 0.0 : overall_rob - acc_rob[i] - o_.frl.baseline_tau;
    FrlUpdateRule rule;
    rule.update_bdy = rule.update_m = false;
    rule.r1 = frl_r1_at(o_.frl.r1, epoch, o_.frl.halve_every);
    rule.lim = o_.frl.lim;
    const std::vector<double> zero(classes_, 0.0);
    lambda_ = frl_update({lambda_, zero, zero}, {violation_, zero}, rule).nat;
    weight_ = frl_costs(lambda_);
}

void FrlBaselineReweight::start_epoch(const EpochStart& start) {
    const EvalSplit& val = require_validation(start.validation, name());
    const int c = classes_ ? classes_ : output_classes(start.model, val);
    const SplitScores s = evaluate_split(start.model, val, val_attack_, c, epoch_seed(start.validation.seed, start.epoch));
    update(start.epoch, s.robust.per_class_accuracy, s.robust.accuracy);
}

BatchLoss FrlBaselineReweight::batch_loss(const BatchInput& in) {
    ensure_classes(in.num_classes);
    const Tensor x_adv = train_attack_.run(in.model, in.images, in.labels, in.rng).x_adv;
    in.model.train();
    const Tensor logits = in.model(x_adv);
    std::vector<float> w = class_lookup(weight_, in.host_labels, "frl_baseline_rw weight");
    double total = 0;
    for (float v : w) total += v;
    for (float& v : w) v = static_cast<float>(v / total);
    const Tensor ce = cross_entropy(logits, in.labels, {0.f, Tensor(), Reduction::None});
    return {mul(ce, Tensor::from_vector(w, {static_cast<int64_t>(w.size())}, ce.device())), logits.detach()};
}

void FrlBaselineReweight::save_state(std::map<std::string, Tensor>&, nn::Metadata& meta) const {
    meta["frl_classes"] = std::to_string(classes_);
    if (!classes_) return;
    put_vector(meta, "frl_lambda_rob", lambda_);
    put_vector(meta, "frl_violation_rob", violation_);
}

void FrlBaselineReweight::load_state(const std::map<std::string, Tensor>&, const nn::Metadata& meta) {
    const auto it = meta.find("frl_classes");
    if (it == meta.end()) throw std::invalid_argument("method state: missing 'frl_classes' (not an FRL run?)");
    const int c = std::stoi(it->second);
    classes_ = 0;
    if (!c) return;
    ensure_classes(c);
    lambda_ = get_vector(meta, "frl_lambda_rob", c);
    violation_ = get_vector(meta, "frl_violation_rob", c);
    weight_ = frl_costs(lambda_);
}

}  // namespace cw::train
