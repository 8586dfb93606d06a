#include "engine/cpu/precision_scope.h"

#include <atomic>
#include <cstdio>

#include "engine/error.h"

namespace cw {

ConvPrecisionScope::ConvPrecisionScope(std::optional<ConvPrecision> precision) {
    if (!precision) return;
    CpuBackend& cpu = cpu_backend();
    saved_ = cpu.conv_policy();
    ConvPolicy policy = *saved_;
    policy.precision = *precision;
    if (*precision == ConvPrecision::Bf16 && !onednn_conv::cpu_has_bf16()) {
        static std::atomic<bool> noted{false};
        if (!noted.exchange(true))
            std::fprintf(stderr, "classwise: --precision bf16 but this CPU has no AVX512_BF16: the training step's "
                                 "convolutions run in fp32\n");
        policy.precision = ConvPrecision::Fp32;
    }
    cpu.set_conv_policy(policy);
}

ConvPrecisionScope::~ConvPrecisionScope() {
    if (saved_) cpu_backend().set_conv_policy(*saved_);
}

ConvPrecision parse_precision_flag(const std::string& flag, const std::string& value) {
    if (value == "fp32") return ConvPrecision::Fp32;
    if (value == "bf16") return ConvPrecision::Bf16;
    throw Error(flag + " must be fp32 or bf16, got '" + value + "'");
}

}  // namespace cw
