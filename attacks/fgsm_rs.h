#pragma once
// FGSM with random start, "Fast is better than free" (docs/protocols/attacks.md §1), the fast-AT training attack:
//   δ ~ U(−ε, ε); box-clip; δ ← clip_{±ε}(δ + α·sign(∇_δ CE(f(x+δ), y))); box-clip.
// Default α = 1.25·ε (Wong et al.: 10/255 at ε = 8/255); mode is Train by default since it is a training step.
#include "attacks/attack.h"

namespace cw::attacks {

struct FgsmRsConfig {
    float eps = 8.f / 255;
    float alpha_factor = 1.25f;   // α = alpha_factor·ε_i unless PerSample::alpha gives α_i
    ModelMode mode = ModelMode::Train;
};

class FgsmRs : public Attack {
public:
    explicit FgsmRs(FgsmRsConfig c) : Attack(Norm::Linf, c.eps, c.mode), c_(c) {}
    std::string name() const override { return "fgsm-rs"; }
    nlohmann::json config() const override;

protected:
    Perturbation perturb(AttackContext& ctx) override;

private:
    FgsmRsConfig c_;
};

}  // namespace cw::attacks
