#include "engine/cpu/precision_scope.h"

#include <atomic>
#include <cstdio>

namespace cw {

ConvPrecisionScope::ConvPrecisionScope(std::optional<ConvPrecision> precision) {
    if (!precision) return;
    CpuBackend& cpu = cpu_backend();
    saved_ = cpu.conv_policy();
    std::string note;
    const ConvPolicy policy =
        resolve_conv_policy(saved_->path, *precision, onednn_conv::cpu_has_bf16(), &note, "--precision bf16");
    static std::atomic<bool> noted{false};
    if (!note.empty() && !noted.exchange(true)) std::fprintf(stderr, "%s\n", note.c_str());
    cpu.set_conv_policy(policy);
}

ConvPrecisionScope::~ConvPrecisionScope() {
    if (saved_) cpu_backend().set_conv_policy(*saved_);
}

}  // namespace cw
