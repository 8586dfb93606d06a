#pragma once
// FAT, Friendly Adversarial Training (Zhang et al. 2020; docs/protocols/training.md §8): the early-stopped PGD-K-τ of
// attacks/early_stop_pgd.h, then per_sample_i = CE(f(x'_i), y_i) / B in train mode.
//   Original (Zhang): eval-mode attack, ω = 0.001 noise per step, dynamic τ (0 for epochs 1–50, 1 for 51–90,
//                     2 after; 1-based) unless a fixed τ is given.
//   Cfa (CFA / FAIR-TAT's FAT baseline): train-mode attack, ω = 0, τ = 3; τ = 0 is the random start only.
// ε, α, K come from the options (FAT's code: 0.031 / 0.007 / 10; CFA: 8/255, 2/255, 10).
#include <memory>

#include "attacks/early_stop_pgd.h"
#include "train/methods/method_options.h"

namespace cw::train {

class Fat : public Method {
public:
    explicit Fat(const MethodOptions& o);
    std::string name() const override { return "fat"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;

    // τ used in (0-based) epoch `epoch`.
    int tau(int64_t epoch) const;
    void set_class_eps(std::vector<float> eps_per_class) { class_eps_ = std::move(eps_per_class); }

private:
    attacks::EarlyStopPgdConfig base_;
    bool dynamic_tau_;
    std::vector<float> class_eps_;
    std::unique_ptr<attacks::EarlyStopPgd> attack_;   // rebuilt when τ changes
    int attack_tau_ = -1;
};

}  // namespace cw::train
