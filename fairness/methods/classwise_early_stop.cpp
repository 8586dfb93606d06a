#include "fairness/methods/classwise_early_stop.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "attacks/early_stop_pgd.h"
#include "attacks/oracle.h"
#include "attacks/steps.h"
#include "engine/attack_ops.h"
#include "engine/ops.h"

namespace cw::train {

Tensor classwise_early_stop_pgd(nn::Module& model, const Tensor& x, const Tensor& labels,
                                const std::vector<int32_t>& host_labels, const std::vector<int>& tau_per_class,
                                const ClasswiseEarlyStopConfig& c, Rng& rng) {
    const int64_t n = x.size(0);
    std::vector<float> tau;
    for (int32_t y : host_labels) {
        if (y < 0 || static_cast<size_t>(y) >= tau_per_class.size())
            throw std::invalid_argument("class-wise early-stopped PGD: label " + std::to_string(y) + " has no tau (" +
                                        std::to_string(tau_per_class.size()) + " classes)");
        tau.push_back(static_cast<float>(tau_per_class[static_cast<size_t>(y)]));
    }
    attacks::ModeScope scope(model, c.mode);
    attacks::ModelOracle oracle(model, x.device());
    NoGradGuard bookkeeping;
    const Tensor nat = x.detach();
    const std::vector<float> eps(static_cast<size_t>(n), c.eps);
    const Tensor eps_t = Tensor::from_vector(eps, {n}, x.device());
    const Tensor alpha = Tensor::full({n}, c.alpha, x.device());
    Tensor x_adv = attacks::uniform_linf_start(nat, eps, rng);
    const attacks::Objective J{AttackObjective::CrossEntropy, labels, {}, 0.f};
    Tensor counter = Tensor::from_vector(tau, {n}, x.device());
    for (int k = 0; k < c.steps; ++k) {
        const attacks::Evaluation e = oracle.value_and_grad(x_adv, J);
        const Tensor moving = attacks::cfa_early_stop_check(counter, e.obj.wrong);
        attack_step_(AttackNorm::Linf, x_adv, e.grad, nat, eps_t, mul(alpha, moving));
    }
    return x_adv;
}

std::vector<int> bat_class_tau(const std::vector<double>& robust_accuracy, int tau_max) {
    std::vector<int> tau;
    for (double t : robust_accuracy) tau.push_back(static_cast<int>(std::lround(tau_max * t)));
    return tau;
}

}  // namespace cw::train
