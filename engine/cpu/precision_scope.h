#pragma once
// The training step's precision (`--precision bf16`): while a ConvPrecisionScope is alive, the CPU backend runs its
// convolutions and matrix products in the precision it names; the policy it found comes back when it ends. The trainer
// holds one around each training step, so the step (its attack included) runs in bf16 while every evaluation keeps
// the environment's precision (CLASSWISE_PRECISION, fp32 unless set).
#include <optional>

#include "engine/cpu/cpu_backend.h"

namespace cw {

class ConvPrecisionScope {
public:
    // std::nullopt changes nothing. bf16 on a CPU without AVX512_BF16 runs fp32, and says so once per process.
    explicit ConvPrecisionScope(std::optional<ConvPrecision> precision);
    ~ConvPrecisionScope();
    ConvPrecisionScope(const ConvPrecisionScope&) = delete;
    ConvPrecisionScope& operator=(const ConvPrecisionScope&) = delete;

private:
    std::optional<ConvPolicy> saved_;
};

}  // namespace cw
