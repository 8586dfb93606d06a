#include "train/methods/pgd_at.h"

#include "train/methods/method_util.h"

namespace cw::train {

attacks::PgdConfig pgd_at_attack_config(const MethodOptions& o, const std::string& name) {
    attacks::PgdConfig c;
    c.eps = o.eps;
    c.alpha = o.resolved_alpha();
    c.steps = o.steps;
    c.start = o.random_start ? attacks::RandomStart::Uniform : attacks::RandomStart::None;
    c.mode = resolve_mode(o.attack_mode, attacks::ModelMode::Train);
    c.name = name;
    return c;
}

PgdAt::PgdAt(const MethodOptions& o)
    : attack_(pgd_at_attack_config(o, "pgd_at-pgd" + std::to_string(o.steps))), clean_forward_(resolve_clean_forward(o.clean_forward, CleanForward::Train)) {}

std::string PgdAt::describe() const {
    const auto& c = attack_.settings();
    return "pgd_at: PGD-" + std::to_string(c.steps) + " Linf CE, eps " + over_255(c.eps) + ", alpha " +
           over_255(c.alpha) + ", " + (c.start == attacks::RandomStart::None ? "no random start" : "uniform start") +
           ", attack in " + attacks::mode_name(c.mode) + " mode; loss mean CE(f(x_adv)) in train mode; clean forward after step: " +
           clean_forward_name(clean_forward_);
}

BatchLoss PgdAt::batch_loss(const BatchInput& in) {
    const Tensor x_adv = attack_.run(in.model, in.images, in.labels, in.rng).x_adv;
    in.model.train();
    const Tensor logits = in.model(x_adv);
    return {per_sample_mean_ce(logits, in.labels), logits.detach()};
}

}  // namespace cw::train
