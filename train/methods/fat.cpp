#include "train/methods/fat.h"

#include <sstream>
#include <stdexcept>

#include "train/methods/method_util.h"

namespace cw::train {

Fat::Fat(const MethodOptions& o) {
    if (!o.random_start)
        throw std::invalid_argument("fat: the early-stopped PGD always starts from U(-eps, eps); "
                                    "turning the random start off is not supported");
    const bool original = o.fat_semantics == attacks::FatSemantics::Original;
    base_.eps = o.eps;
    base_.alpha = o.resolved_alpha();
    base_.steps = o.steps;
    base_.semantics = o.fat_semantics;
    base_.omega = o.fat_omega >= 0 ? o.fat_omega : original ? 0.001f : 0.f;
    base_.mode = resolve_mode(o.attack_mode, original ? attacks::ModelMode::Eval : attacks::ModelMode::Train);
    dynamic_tau_ = o.fat_tau < 0 && original;
    base_.tau = o.fat_tau >= 0 ? o.fat_tau : original ? 0 : 3;
}

int Fat::tau(int64_t epoch) const {
    return dynamic_tau_ ? attacks::fat_original_tau(static_cast<int>(epoch) + 1) : base_.tau;
}

std::string Fat::describe() const {
    std::ostringstream os;
    os << "fat: early-stopped PGD-" << base_.steps << " ("
       << (base_.semantics == attacks::FatSemantics::Original ? "original Zhang" : "CFA") << " semantics), tau "
       << (dynamic_tau_ ? std::string("dynamic 0/1/2 (epochs 1-50/51-90/91+)") : std::to_string(base_.tau))
       << ", eps " << over_255(base_.eps) << ", alpha " << over_255(base_.alpha) << ", omega " << base_.omega
       << ", uniform start, attack in " << attacks::mode_name(base_.mode) << " mode; loss mean CE(f(x')) in train mode";
    return os.str();
}

BatchLoss Fat::batch_loss(const BatchInput& in) {
    const int t = tau(in.epoch);
    if (!attack_ || attack_tau_ != t) {
        attacks::EarlyStopPgdConfig c = base_;
        c.tau = t;
        attack_ = std::make_unique<attacks::EarlyStopPgd>(c);
        attack_tau_ = t;
    }
    attacks::PerSample ps;
    if (!class_eps_.empty()) ps.eps = attacks::class_wise(in.host_labels, class_eps_);
    const Tensor x_adv = attack_->run(in.model, in.images, in.labels, in.rng, ps).x_adv;
    in.model.train();
    const Tensor logits = in.model(x_adv);
    return {per_sample_mean_ce(logits, in.labels), logits.detach()};
}

}  // namespace cw::train
