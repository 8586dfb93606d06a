#include "fairness/methods/wat.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "attacks/attack.h"
#include "engine/ops.h"
#include "fairness/methods/validation_pass.h"
#include "train/state_vectors.h"
#include "fairness/methods/weighted_trades.h"
#include "train/methods/method_util.h"
#include "train/methods/trades.h"

namespace cw::train {

namespace {
constexpr float kStartSigma = 0.001f;
}

std::vector<double> wat_hedge_weights(const std::vector<double>& cum_cost, double eta) {
    if (cum_cost.size() < 2) throw std::invalid_argument("wat: Hedge needs C+1 >= 2 entries");
    const double c = static_cast<double>(cum_cost.size() - 1);
    const double top = *std::max_element(cum_cost.begin(), cum_cost.end());
    std::vector<double> w;
    double total = 0;
    for (double x : cum_cost) total += std::exp(eta * (x - top));   // shifted: the same softmax, no overflow
    for (double x : cum_cost) w.push_back(c * std::exp(eta * (x - top)) / total);
    return w;
}

Wat::Wat(const MethodOptions& o) : o_(o) {
    if (!(o.frl.wat_eta >= 0) || !std::isfinite(o.frl.wat_eta)) throw std::invalid_argument("wat options: --wat-eta must be >= 0");
    if (!(o.frl.wat_beta >= 0)) throw std::invalid_argument("wat options: --wat-beta must be >= 0");
}

MethodOptions Wat::trades_options() const {
    MethodOptions t = o_;
    t.beta = o_.frl.wat_beta;
    t.trades_form = TradesForm::Original;
    t.attack_mode = ModeChoice::Eval;
    return t;
}

std::string Wat::describe() const {
    std::ostringstream os;
    os << "wat: TRADES (" << o_.steps << " sign steps, eps " << over_255(o_.eps) << ", alpha "
       << over_255(o_.resolved_alpha()) << ", eval-mode attack, beta " << o_.frl.wat_beta
       << ") with C+1 Hedge weights on the validation split's per-class TRADES cost, eta " << o_.frl.wat_eta;
    return os.str();
}

void Wat::ensure_classes(int c) {
    if (classes_ == c) return;
    if (classes_ != 0) throw std::invalid_argument("wat: class count changed");
    classes_ = c;
    w_.assign(c + 1, 1.0);
    cum_.assign(c + 1, 0.0);
}

void Wat::update(const std::vector<double>& class_cost, double mean_cost) {
    ensure_classes(static_cast<int>(class_cost.size()));
    for (int k = 0; k < classes_; ++k) cum_[k] += class_cost[k];
    cum_[classes_] += mean_cost;
    w_ = wat_hedge_weights(cum_, o_.frl.wat_eta);
}

BatchLoss Wat::batch_loss(const BatchInput& in) {
    ensure_classes(in.num_classes);
    const Trades trades(trades_options());
    const Tensor start = o_.random_start ? noisy_start(in.images, kStartSigma, in.rng) : in.images.detach().clone();
    const Tensor x_adv = trades.adversarial(in.model, in.images, start, in.host_labels);
    return weighted_trades_loss(in.model, in.images, x_adv, in.labels, loss_coefficients(in.host_labels));
}

TradesCoefficients Wat::loss_coefficients(const std::vector<int32_t>& labels) const {
    TradesCoefficients c{class_lookup(std::vector<double>(w_.begin(), w_.end() - 1), labels, "wat weight"), {}};
    const double b = static_cast<double>(labels.size());
    for (float& v : c.ce) {
        v = static_cast<float>((v + w_[classes_]) / b);
        c.kl.push_back(o_.frl.wat_beta * v);
    }
    return c;
}

void Wat::start_epoch(const EpochStart& start) { require_validation(start.validation, name()); }

EpochDecision Wat::end_epoch(const EpochEnd& end) {
    const EvalSplit& val = require_validation(end.validation, name());
    if (!classes_) ensure_classes(output_classes(end.model, val));
    const Trades trades(trades_options());
    Rng rng(epoch_seed(end.validation.seed, end.epoch));
    std::vector<double> sum(classes_, 0.0);
    std::vector<int64_t> count(classes_, 0);
    for (int64_t b = 0; b < val.data.num_batches; ++b) {
        const eval::EvalBatch batch = val.data.batch(b);
        const std::vector<int32_t> labels = batch.labels.to_int_vector();
        const Tensor x = batch.images;
        const Tensor x_adv = trades.adversarial(end.model, x, noisy_start(x, kStartSigma, rng), labels);
        attacks::ModeScope eval(end.model, attacks::ModelMode::Eval);
        NoGradGuard no_grad;
        const Tensor nat = end.model(x);
        const Tensor adv = end.model(x_adv);
        const std::vector<float> ce = cross_entropy(nat, batch.labels.to(x.device()), {0.f, Tensor(), Reduction::None}).to_vector();
        const std::vector<float> kl = kl_div(nat, adv, Reduction::None).to_vector();
        for (size_t i = 0; i < labels.size(); ++i) {
            const int32_t y = labels[i];
            if (y < 0 || y >= classes_) throw std::invalid_argument("wat: validation label " + std::to_string(y) + " outside the classes");
            sum[y] += ce[i] + o_.frl.wat_beta * kl[i];
            ++count[y];
        }
    }
    double total = 0;
    int64_t n = 0;
    for (int k = 0; k < classes_; ++k) total += sum[k], n += count[k];
    const double mean = n ? total / n : 0.0;
    std::vector<double> class_cost(classes_);
    for (int k = 0; k < classes_; ++k) class_cost[k] = count[k] ? sum[k] / count[k] : mean;   // absent class: neutral
    update(class_cost, mean);
    return {};
}

std::vector<std::string> Wat::class_state_names() const { return {"weight", "cum_cost", "avg_weight", "avg_cum_cost"}; }

std::vector<std::vector<double>> Wat::class_state() const {
    if (!classes_) return {{}, {}, {}, {}};
    return {std::vector<double>(w_.begin(), w_.end() - 1), std::vector<double>(cum_.begin(), cum_.end() - 1),
            std::vector<double>(classes_, w_.back()), std::vector<double>(classes_, cum_.back())};
}

void Wat::save_state(std::map<std::string, Tensor>&, nn::Metadata& meta) const {
    meta["wat_classes"] = std::to_string(classes_);
    if (!classes_) return;
    put_vector(meta, "wat_cum_cost", cum_);
    put_vector(meta, "wat_weight", w_);
}

void Wat::load_state(const std::map<std::string, Tensor>&, const nn::Metadata& meta) {
    const auto it = meta.find("wat_classes");
    if (it == meta.end()) throw std::invalid_argument("method state: missing 'wat_classes' (not a WAT run?)");
    const int c = std::stoi(it->second);
    classes_ = 0;
    if (!c) return;
    ensure_classes(c);
    cum_ = get_vector(meta, "wat_cum_cost", c + 1);
    w_ = get_vector(meta, "wat_weight", c + 1);   // saved, not recomputed: before the first update they are all 1
}

}  // namespace cw::train
