#pragma once
// Natural training (docs/protocols/training.md §4): per_sample_i = CE(f(x_i), y_i) / B.
#include "train/methods/method_options.h"

namespace cw::train {

class Natural : public Method {
public:
    explicit Natural(const MethodOptions& o) : clean_forward_(resolve_clean_forward(o.clean_forward, CleanForward::Off)) {}
    std::string name() const override { return "natural"; }
    std::string describe() const override;
    BatchLoss batch_loss(const BatchInput& in) override;
    CleanForward clean_forward_after_step() const override { return clean_forward_; }

private:
    CleanForward clean_forward_;
};

}  // namespace cw::train
