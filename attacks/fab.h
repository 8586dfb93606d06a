#pragma once
// FAB-T, targeted Fast Adaptive Boundary, L∞ (Croce & Hein 2020; docs/protocols/attacks.md §5), AutoAttack standard settings.
// A minimum-norm attack: it walks towards the decision boundary between y and a target t by repeatedly
// linearising h(v) = z_t(v) − z_y(v) and projecting onto the hyperplane h = 0 (engine/linf_box_projection.h), biased
// towards the clean point x; every misclassified iterate that is closer to x than the best so far is kept and
// the iterate is pulled back towards x. A sample counts as broken only if its best distance is ≤ ε.
//
// One run (target t, on the still-robust samples):
//   x¹ = x  (restarts after the first: x + 0.5·min(best, ε)·u/||u||_∞, u ~ U(−1,1)^n, box-clipped)
//   repeat n_iter:
//     hyperplane {v : h(x¹) + ⟨∇h(x¹), v − x¹⟩ = 0};  d₁ = proj(x¹), d₂ = proj(x)   (box-constrained, min L∞)
//     a = min(max(||d₁||/(||d₁|| + ||d₂||), 0), α_max)
//     x¹ ← clip_box((x¹ + η·d₁)(1 − a) + (x + η·d₂)·a)
//     if argmax f(x¹) ≠ y:  if ||x¹ − x||_∞ < best: store x¹, best = ||x¹ − x||_∞;   x¹ ← x + β(x¹ − x)
// The pull-back applies to every misclassified iterate, stored or not (as AutoAttack's code does).
// Outer loop: targets = 2nd .. (n_target_classes+1)-th largest clean logit (like APGD-T), restarts per target.
// The RNG is used only by restarts after the first, so standard FAB-T (1 restart) is deterministic.
#include <string>

#include "attacks/attack.h"

namespace cw::attacks {

struct FabConfig {
    float eps = 8.f / 255;
    int n_iter = 100;
    int restarts = 1;
    float alpha_max = 0.1f;
    float eta = 1.05f;    // overshoot
    float beta = 0.9f;    // backward step
    int n_target_classes = 9;
    ModelMode mode = ModelMode::Eval;
};

class FabTargeted : public Attack {
public:
    explicit FabTargeted(FabConfig c);
    std::string name() const override { return "fab-t"; }
    nlohmann::json config() const override;

protected:
    Perturbation perturb(AttackContext& ctx) override;

private:
    struct RunResult {
        Tensor best_adv;                // on the model's device
        std::vector<float> best_dist;   // +inf where no misclassified iterate was found
    };
    // One run from x1 towards targets t; x and x1 on the model's device.
    RunResult single_run(ModelOracle& model, const Tensor& x, Tensor x1, const std::vector<int32_t>& y,
                         const std::vector<int32_t>& t) const;
    FabConfig c_;
};

}  // namespace cw::attacks
