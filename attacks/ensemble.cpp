#include "attacks/ensemble.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/checks.h"

namespace cw::attacks {

Ensemble::Ensemble(std::string name, nlohmann::json extra, std::vector<std::unique_ptr<Attack>> parts,
                   ModelMode mode)
    : Attack(parts.empty() ? Norm::Linf : parts.front()->norm(), parts.empty() ? 0.f : parts.front()->eps(), mode),
      name_(std::move(name)), extra_(std::move(extra)), parts_(std::move(parts)) {
    if (parts_.empty()) throw std::invalid_argument("ensemble '" + name_ + "' has no attacks");
    for (const auto& p : parts_)
        if (p->norm() != norm() || p->eps() != eps() || p->mode() != mode)
            throw std::invalid_argument("ensemble '" + name_ + "': part " + p->name() +
                                        " differs in norm, eps or model mode from the ensemble");
}

void Ensemble::set_log(std::ostream* log) {
    Attack::set_log(log);
    for (auto& p : parts_) p->set_log(log);
}

nlohmann::json Ensemble::config() const {
    auto j = base_config(name_);
    j.update(extra_);
    j["attacks"] = nlohmann::json::array();
    j["parts"] = nlohmann::json::array();
    for (const auto& p : parts_) {
        j["attacks"].push_back(p->name());
        j["parts"].push_back(p->config());
    }
    return j;
}

StageResult Ensemble::run_stage(size_t k, nn::Module& model, const Tensor& x, const std::vector<int32_t>& y,
                                const std::vector<uint8_t>& robust, uint64_t seed, const PerSample& ps) {
    StageResult r;
    r.attacked = where(robust);
    if (r.attacked.empty()) return r;
    const Tensor sub = take_rows(x, r.attacked);
    std::vector<int32_t> y_sub;
    PerSample ps_sub;
    for (int64_t i : r.attacked) {
        y_sub.push_back(y[i]);
        if (!ps.eps.empty()) ps_sub.eps.push_back(ps.eps[i]);
        if (!ps.alpha.empty()) ps_sub.alpha.push_back(ps.alpha[i]);
        if (!ps.targets.empty()) ps_sub.targets.push_back(ps.targets[i]);
    }
    Rng rng(seed);   // every part starts from the same seed (AutoAttack re-seeds before each attack)
    const AttackResult res = parts_.at(k)->run(model, sub, Tensor::from_labels(y_sub, x.device()), rng, ps_sub);

    // Robustness is decided on the returned points by a fresh forward pass.
    r.x_adv = res.x_adv;
    {
        ModeScope scope(model, mode());
        ModelOracle oracle(model, x.device());
        r.pred = oracle.predict(r.x_adv);
    }
    r.broken.resize(r.attacked.size());
    for (size_t i = 0; i < r.attacked.size(); ++i) r.broken[i] = r.pred[i] != y_sub[i];
    r.sanity = check_adversarial(from_tensor(sub), from_tensor(r.x_adv),
                                 ps_sub.eps.empty() ? std::vector<float>(r.attacked.size(), eps()) : ps_sub.eps, norm());
    return r;
}

Perturbation Ensemble::perturb(AttackContext& ctx) {
    Perturbation p{ctx.x.clone(), {}, {}};
    std::vector<uint8_t> robust(static_cast<size_t>(ctx.n()));
    const std::vector<int32_t> clean = ctx.model.predict(ctx.x);
    const std::vector<int32_t>& labels = ctx.host_y();
    for (int64_t i = 0; i < ctx.n(); ++i) robust[i] = clean[i] == labels[i];
    const uint64_t seed = ctx.rng.next_u64();
    for (size_t k = 0; k < parts_.size(); ++k) {
        const StageResult s = run_stage(k, ctx.model.module(), ctx.x, labels, robust, seed, ctx.per_sample);
        if (!s.sanity.empty() && log())
            *log() << "warning: " << parts_[k]->name() << " returned a bad point: " << s.sanity << "\n";
        adopt_broken(p.x_adv, robust, s.attacked, s.x_adv, s.broken);
    }
    return p;
}

}  // namespace cw::attacks
