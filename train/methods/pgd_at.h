#pragma once
// PGD-AT (Madry et al.) with Rice et al.'s settings (docs/protocols/training.md §5): PGD-K L∞ on CE from a uniform start,
// crafted in TRAIN mode (BN batch statistics; each of the K forwards moves the running statistics), then
// per_sample_i = CE(f(x_adv_i), y_i) / B in train mode — no clean term. After the optimiser step the trainer runs
// a clean train-mode forward by default (Rice / CFA log training clean accuracy that way, so the running
// statistics also see clean batches).
#include "attacks/pgd.h"
#include "train/methods/method_options.h"

namespace cw::train {

// PGD-AT's attack from the method options: PGD-K L∞ CE, ε, α (resolved_alpha), uniform start unless turned off,
// train mode unless --attack-mode says otherwise. CFA's AT base and the long-tail methods craft with it too.
attacks::PgdConfig pgd_at_attack_config(const MethodOptions& o, const std::string& name);

class PgdAt : public Method {
public:
    explicit PgdAt(const MethodOptions& o);
    std::string name() const override { return "pgd_at"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    CleanForward clean_forward_after_step() const override { return clean_forward_; }

private:
    attacks::Pgd attack_;
    CleanForward clean_forward_;
};

}  // namespace cw::train
