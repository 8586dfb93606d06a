#include "train/methods/fgsm_rs.h"

#include <sstream>

#include "attacks/fgsm_rs.h"
#include "attacks/pgd.h"
#include "train/methods/method_util.h"

namespace cw::train {

namespace {
float guard_alpha(const MethodOptions& o) { return o.fgsm_guard_alpha >= 0 ? o.fgsm_guard_alpha : o.eps / 4; }
const char* kGuardPrefix = "fgsm_guard.";
}  // namespace

FgsmRs::FgsmRs(const MethodOptions& o) : o_(o) {
    const attacks::ModelMode mode = resolve_mode(o.attack_mode, attacks::ModelMode::Train);
    if (o.random_start) {
        attack_ = std::make_unique<attacks::FgsmRs>(attacks::FgsmRsConfig{o.eps, o.fgsm_alpha_factor, mode});
    } else {
        // Without the random start the step from x is α ≥ ε clipped back to ε: plain FGSM (a one-step PGD).
        attacks::PgdConfig c;
        c.eps = o.eps;
        c.alpha = o.fgsm_alpha_factor * o.eps;
        c.steps = 1;
        c.start = attacks::RandomStart::None;
        c.mode = mode;
        c.name = "fgsm_rs-no-start";
        attack_ = std::make_unique<attacks::Pgd>(c);
    }
    if (o.fgsm_guard) {
        attacks::PgdConfig g;
        g.eps = o.eps;
        g.alpha = guard_alpha(o);
        g.steps = o.fgsm_guard_steps;
        g.mode = attacks::ModelMode::Eval;
        g.name = "fgsm_guard-pgd" + std::to_string(o.fgsm_guard_steps);
        guard_attack_ = std::make_unique<attacks::Pgd>(g);
    }
}

std::string FgsmRs::describe() const {
    std::ostringstream os;
    os << "fgsm_rs: eps " << over_255(o_.eps) << ", alpha " << o_.fgsm_alpha_factor << "*eps = "
       << over_255(o_.fgsm_alpha_factor * o_.eps) << ", " << (o_.random_start ? "uniform start" : "no random start")
       << ", attack in " << attacks::mode_name(attack_->mode()) << " mode; loss mean CE(f(x_adv)); guard ";
    if (guard_attack_)
        os << "on (PGD-" << o_.fgsm_guard_steps << " alpha " << over_255(guard_alpha(o_))
           << " eval mode on each epoch's first batch, stop on a drop > " << o_.fgsm_guard_drop << ")";
    else
        os << "off";
    return os.str();
}

BatchLoss FgsmRs::batch_loss(const BatchInput& in) {
    if (guard_attack_ && in.batch == 0) {
        guard_images_ = in.images.clone();
        guard_labels_ = in.labels.clone();
        guard_rng_ = in.rng.fork();
    }
    const Tensor x_adv = attack_->run(in.model, in.images, in.labels, in.rng).x_adv;
    in.model.train();
    const Tensor logits = in.model(x_adv);
    return {per_sample_mean_ce(logits, in.labels), logits.detach()};
}

EpochDecision FgsmRs::end_epoch(const EpochEnd& end) {
    if (!guard_attack_ || !guard_images_.defined()) return {};
    const Device device = end.model.device();   // a resumed guard batch comes back on the host
    const attacks::AttackResult r =
        guard_attack_->run(end.model, guard_images_.to(device), guard_labels_.to(device), guard_rng_);
    int64_t robust = 0;
    for (uint8_t s : r.success) robust += s == 0;
    const double acc = static_cast<double>(robust) / static_cast<double>(r.success.size());
    if (have_check_ && acc - prev_acc_ < -o_.fgsm_guard_drop) {
        std::ostringstream why;
        why << "fgsm_rs guard: PGD-" << o_.fgsm_guard_steps << " accuracy on the first batch of epoch "
            << end.epoch << " fell from " << prev_acc_ << " to " << acc << " (drop > " << o_.fgsm_guard_drop
            << ", catastrophic overfitting); restoring the weights of the previous check";
        return {true, why.str(), prev_state_};
    }
    have_check_ = true;
    prev_acc_ = acc;
    prev_state_ = clone_state(end.model);
    return {};
}

void FgsmRs::save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const {
    if (!guard_attack_) return;
    const std::string p = kGuardPrefix;
    if (guard_images_.defined()) {
        tensors[p + "images"] = guard_images_;
        std::vector<float> labels;
        for (int32_t y : guard_labels_.to_int_vector()) labels.push_back(static_cast<float>(y));
        tensors[p + "labels"] = Tensor::from_vector(labels, {static_cast<int64_t>(labels.size())});
        std::ostringstream rng;
        for (uint64_t w : guard_rng_.state()) rng << w << " ";
        meta[p + "rng"] = rng.str();
    }
    meta[p + "have_check"] = have_check_ ? "1" : "0";
    std::ostringstream acc;
    acc.precision(17);
    acc << prev_acc_;
    meta[p + "prev_acc"] = acc.str();
    for (size_t i = 0; i < prev_state_.size(); ++i) tensors[p + "state." + std::to_string(i)] = prev_state_[i];
}

void FgsmRs::load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) {
    if (!guard_attack_) return;
    const std::string p = kGuardPrefix;
    auto images = tensors.find(p + "images");
    if (images != tensors.end()) {
        guard_images_ = images->second.clone();
        std::vector<int32_t> labels;
        for (float y : tensors.at(p + "labels").to_vector()) labels.push_back(static_cast<int32_t>(y));
        guard_labels_ = Tensor::from_labels(labels, guard_images_.device());
        std::istringstream rng(meta.at(p + "rng"));
        std::vector<uint64_t> s;
        for (uint64_t w; rng >> w;) s.push_back(w);
        guard_rng_.set_state(s);
    }
    auto flag = meta.find(p + "have_check");
    have_check_ = flag != meta.end() && flag->second == "1";
    auto acc = meta.find(p + "prev_acc");
    prev_acc_ = acc != meta.end() ? std::stod(acc->second) : 0;
    prev_state_.clear();
    for (size_t i = 0;; ++i) {
        auto t = tensors.find(p + "state." + std::to_string(i));
        if (t == tensors.end()) break;
        prev_state_.push_back(t->second.clone());
    }
}

}  // namespace cw::train
