#pragma once
// Early-stopped PGD-K-τ of Friendly Adversarial Training (FAT, Zhang et al. 2020; docs/protocols/training.md §8), L∞, CE,
// uniform start U(−ε_i, ε_i). A sample stops being pushed once it has been misclassified more than τ times, so
// training sees "friendly" adversarial examples just past the decision boundary. Two bookkeepings:
//
// Original (Zhang): per-sample budget τ. At each of the K steps, an active sample that is misclassified is frozen
//   (output as is) if its budget is 0, else its budget drops by one and it stays active. The step is
//   x ← x + α·sign(∇CE) + ω·N(0, I), projected to the ε-ball and the box. The forward pass covers the active
//   samples only (as in the reference code; in eval mode this equals a full-batch pass per sample).
// Cfa (CFA / FAIR-TAT's FAT baseline, as their code runs it): per-sample counter starting at τ. At each of the K
//   checks (full-batch forward) a sample moves iff its counter is > 0 at the check, and then the counter drops by
//   one if the sample is currently misclassified: a sample with counter 1 that is misclassified still moves once.
//   So a sample moves after at most τ misclassified checks; once 0 it never moves again, even if it becomes
//   correct (τ = 0: random start only).
//
// Targeted (Cfa bookkeeping only; FAIR-TAT + FAT, docs/protocols/fair_tat.md §4 item 4, our reconstruction): the step descends
// CE(f(x'), t_i) toward each sample's target (PerSample::targets, else uniform ≠ y), while "misclassified" keeps
// meaning ŷ ≠ y — a sample stops once it has left its class τ times, whichever class it reached.
#include <string>

#include "attacks/attack.h"

namespace cw::attacks {

enum class FatSemantics { Original, Cfa };

struct EarlyStopPgdConfig {
    float eps = 8.f / 255;
    float alpha = 2.f / 255;
    int steps = 10;
    int tau = 3;
    float omega = 0.f;            // noise added to every step (original FAT: 0.001)
    FatSemantics semantics = FatSemantics::Cfa;
    bool targeted = false;        // Cfa semantics only
    ModelMode mode = ModelMode::Train;
    std::string name;             // empty: "fat-pgd<K>-tau<τ>"
};

// Zhang et al.'s defaults: ε = 0.031, α = 0.007, K = 10, ω = 0.001, eval mode; τ is scheduled by the trainer
// (fat_original_tau).
EarlyStopPgdConfig fat_original_config(int tau);
// Zhang et al.'s dynamic τ: 0 for epochs ≤ 50, 1 for 51–90, 2 afterwards (1-based epochs).
int fat_original_tau(int epoch_1based);
// CFA / FAIR-TAT: τ = 3, ω = 0, ε = 8/255 (or ε_{y_i} through PerSample::eps), α = 2/255, K = 10, train mode.
EarlyStopPgdConfig fat_cfa_config(float eps = 8.f / 255);
// The Cfa bookkeeping of one check, on the device: which samples move at this check (counter > 0 before it),
// then counter ← max(counter − wrong, 0). Shared with BAT's class-wise form (classwise_early_stop.h).
Tensor cfa_early_stop_check(Tensor& counter, const Tensor& wrong);

class EarlyStopPgd : public Attack {
public:
    explicit EarlyStopPgd(EarlyStopPgdConfig c);
    std::string name() const override { return name_; }
    nlohmann::json config() const override;
    bool targeted() const override { return c_.targeted; }
    const EarlyStopPgdConfig& settings() const { return c_; }

protected:
    Perturbation perturb(AttackContext& ctx) override;

private:
    Perturbation original(AttackContext& ctx, const std::vector<float>& alpha);
    Perturbation cfa(AttackContext& ctx, const Tensor& alpha);
    // One step of the moving samples (α_i = 0 for the others): sign step, ω·N(0, I) noise where moving (drawn on
    // the host for the moving samples only, in sample order), then the ε-ball and the box.
    void step(Tensor& x_adv, const Tensor& grad, const Tensor& x_nat, const Tensor& eps, const Tensor& alpha,
              const std::vector<uint8_t>& moving, Rng& rng) const;
    EarlyStopPgdConfig c_;
    std::string name_;
};

}  // namespace cw::attacks
