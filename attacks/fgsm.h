#pragma once
// FGSM (docs/protocols/attacks.md §1): one signed-gradient step of size ε.
//   untargeted: x' = clip_box(x + ε·sign(∇_x CE(f(x), y)))
//   targeted:   x' = clip_box(x − ε·sign(∇_x CE(f(x), t)))   (t from PerSample::targets, else uniform ≠ y)
#include "attacks/attack.h"

namespace cw::attacks {

struct FgsmConfig {
    float eps = 8.f / 255;
    bool targeted = false;
    ModelMode mode = ModelMode::Eval;
};

class Fgsm : public Attack {
public:
    explicit Fgsm(FgsmConfig c) : Attack(Norm::Linf, c.eps, c.mode), c_(c) {}
    std::string name() const override { return c_.targeted ? "fgsm-targeted" : "fgsm"; }
    nlohmann::json config() const override;
    bool targeted() const override { return c_.targeted; }

protected:
    Perturbation perturb(AttackContext& ctx) override;

private:
    FgsmConfig c_;
};

}  // namespace cw::attacks
