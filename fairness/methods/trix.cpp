#include "fairness/methods/trix.h"

#include <sstream>

#include "attacks/attack.h"
#include "engine/ops.h"
#include "fairness/methods/dafa.h"
#include "fairness/methods/dafa_weights.h"
#include "fairness/methods/target_prior.h"
#include "train/methods/method_util.h"
#include "train/state_vectors.h"

namespace cw::train {

namespace {
constexpr float kStartSigma = 0.001f;
// The split's weights are 1 + λ·D_k and the split compares them with their batch mean, 1 + λ·mean(D): every λ > 0
// gives the same split. The code never passes its own λ either.
constexpr double kSplitLambda = 1.0;
}

Trix::Trix(const MethodOptions& o)
    : eps_(o.eps), alpha_(o.resolved_alpha()), beta_(o.beta >= 0 ? o.beta : 6.f), steps_(o.steps),
      mixed_(o.dafa.trix_mixed), schedule_(o.dafa, "trix") {
    if (!o.random_start)
        throw std::invalid_argument("trix: the inner loop needs its x + 0.001*N(0,I) start (x' = x is a stationary "
                                    "point of the KL); --no-random-start is not supported");
}

std::string Trix::describe() const {
    std::ostringstream os;
    os << "trix: " << steps_ << " eval-mode sign steps from x + 0.001*N(0,I), eps " << over_255(eps_) << ", alpha "
       << over_255(alpha_) << "; "
       << (mixed_ ? "per batch, classes whose clean-probability DAFA weight is below the batch mean: targeted CE "
                    "descent toward a uniform t != y; the others: KL ascent"
                  : "every sample KL ascent (mixed attack off)")
       << "; loss W_y*CE + " << beta_ << "*KL; DAFA weights from epoch " << schedule_.warmup() << " (lambda "
       << schedule_.lambda() << ", ties " << (schedule_.ties() == DafaTies::Code ? "code" : "paper")
       << "): eps_k = W_k*eps, alpha_k = W_k*alpha";
    return os.str();
}

void Trix::ensure_classes(int num_classes) {
    if (num_classes <= 0) return;
    schedule_.ensure_classes(num_classes);   // no-op once sized (a loaded state, or a test driving the schedule)
    if (!seen_.empty()) return;
    seen_.assign(schedule_.num_classes(), 0);
    targeted_.assign(schedule_.num_classes(), 0);
}

std::vector<int32_t> Trix::targets(nn::Module& model, const Tensor& x, const std::vector<int32_t>& host_labels,
                                   int num_classes, Rng& rng) const {
    std::vector<int32_t> t(host_labels.size(), -1);
    if (!mixed_) return t;
    std::vector<float> probs;
    {
        attacks::ModeScope scope(model, attacks::ModelMode::Eval);
        NoGradGuard no_grad;
        probs = softmax(model(x.detach())).to_vector();
    }
    const std::vector<uint8_t> split =
        trix_targeted(trix_batch_weights(probs, host_labels, num_classes, kSplitLambda), host_labels);
    for (size_t n = 0; n < t.size(); ++n)
        if (split[n]) t[n] = draw_uniform_target(num_classes, host_labels[n], rng);
    return t;
}

Tensor Trix::adversarial(nn::Module& model, const Tensor& x, const Tensor& start, const std::vector<int32_t>& targets,
                         const std::vector<int32_t>& host_labels) const {
    const int64_t b = x.size(0);
    const std::vector<float> scale = schedule_.sample_radius_scale(host_labels);
    std::vector<float> eps(b), alpha(b), untargeted(b), targeted(b);
    std::vector<int32_t> target_or_label(b);
    for (int64_t n = 0; n < b; ++n) {
        eps[n] = scale[n] * eps_;
        alpha[n] = scale[n] * alpha_;
        const bool t = targets[n] >= 0;
        targeted[n] = t ? 1.f : 0.f;
        untargeted[n] = t ? 0.f : 1.f;
        target_or_label[n] = t ? targets[n] : host_labels[n];
    }
    const Device d = x.device();
    const Tensor mask_t = Tensor::from_vector(targeted, {b}, d), mask_u = Tensor::from_vector(untargeted, {b}, d);
    const Tensor goal = Tensor::from_labels(target_or_label, d);
    attacks::ModeScope scope(model, attacks::ModelMode::Eval);
    Tensor clean;
    {
        NoGradGuard no_grad;
        clean = model(x.detach());   // p(x), a constant of the inner problem
    }
    // Ascending Σ_untargeted KL_n − Σ_targeted CE(f(x'_n), t_n): eval mode keeps the samples independent, so each
    // sample's sign step is TRIX's (+sign ∇KL for the weak classes, −sign ∇CE toward t for the strong ones).
    auto gradient = [&](const Tensor& xa) {
        InputGradOnlyGuard input_only;
        Tensor input = xa.detach();
        input.set_requires_grad(true);
        const Tensor z = model(input);
        const Tensor objective = sub(sum(mul(kl_div(clean, z, Reduction::None), mask_u)),
                                     sum(mul(cross_entropy(z, goal, {0.f, Tensor(), Reduction::None}), mask_t)));
        objective.backward();
        return input.grad().defined() ? input.grad() : Tensor::zeros(xa.shape(), DType::F32, xa.device());
    };
    return sign_ascent(x, start, eps, alpha, steps_, gradient);
}

BatchLoss Trix::batch_loss(const BatchInput& in) {
    if (in.num_classes < 2) throw std::invalid_argument("trix: needs at least 2 classes for targets != y");
    ensure_classes(in.num_classes);
    const Tensor start = noisy_start(in.images, kStartSigma, in.rng);
    const std::vector<int32_t> t = targets(in.model, in.images, in.host_labels, in.num_classes, in.rng);
    const Tensor x_adv = adversarial(in.model, in.images, start, t, in.host_labels);
    for (size_t n = 0; n < t.size(); ++n) {
        ++seen_[in.host_labels[n]];
        if (t[n] >= 0) ++targeted_[in.host_labels[n]];
    }
    BatchLoss out = dafa_outer_loss(in.model, in.images, x_adv, in.labels, schedule_.sample_weights(in.host_labels), beta_);
    if (schedule_.recording(in.epoch)) schedule_.record(in.epoch, host_probabilities(out.logits), in.host_labels);
    return out;
}

void Trix::start_epoch(const EpochStart&) {
    std::fill(seen_.begin(), seen_.end(), 0);
    std::fill(targeted_.begin(), targeted_.end(), 0);
}

EpochDecision Trix::end_epoch(const EpochEnd& end) {
    ensure_classes(end.train.num_classes());
    schedule_.end_epoch(end.epoch);
    return {};
}

std::vector<std::vector<double>> Trix::class_state() const {
    std::vector<double> eps, share;
    for (float s : schedule_.radius_scale()) eps.push_back(static_cast<double>(s * eps_));
    for (size_t k = 0; k < seen_.size(); ++k)
        share.push_back(seen_[k] > 0 ? static_cast<double>(targeted_[k]) / static_cast<double>(seen_[k]) : 0.0);
    return {schedule_.weights(), eps, schedule_.self_probability(), share};
}

void Trix::save_state(std::map<std::string, Tensor>&, nn::Metadata& meta) const {
    schedule_.save(meta);
    if (seen_.empty()) return;
    put_vector(meta, "trix_seen", seen_);
    put_vector(meta, "trix_targeted", targeted_);
}

void Trix::load_state(const std::map<std::string, Tensor>&, const nn::Metadata& meta) {
    schedule_.load(meta);
    const int c = schedule_.num_classes();
    if (c <= 0) return;
    seen_ = get_vector<int64_t>(meta, "trix_seen", c);
    targeted_ = get_vector<int64_t>(meta, "trix_targeted", c);
}

}  // namespace cw::train
