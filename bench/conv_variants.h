// The convolution settings the benchmarks compare, by name: native (Winograd / im2col + OpenBLAS), onednn (oneDNN
// fp32), auto (the mix CLASSWISE_CONV=auto picks), bf16 (oneDNN with bf16 inputs); engine/cpu/conv.cpp.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "engine/cpu/cpu_backend.h"

namespace cw_bench {

struct ConvVariant {
    std::string name;
    cw::ConvPolicy policy;
};

// "native,onednn,bf16" -> the variants in that order. An unknown name returns false with *error set. bf16 on a CPU
// without native bf16 is left out, with a note on stderr (oneDNN would emulate it, slower than fp32).
inline bool parse_conv_variants(const std::string& list, std::vector<ConvVariant>* out, std::string* error) {
    std::stringstream in(list);
    for (std::string name; std::getline(in, name, ',');) {
        if (name.empty()) continue;
        if (name == "native") {
            out->push_back({name, {cw::ConvPath::Native, cw::ConvPrecision::Fp32}});
        } else if (name == "onednn") {
            out->push_back({name, {cw::ConvPath::OneDnn, cw::ConvPrecision::Fp32}});
        } else if (name == "auto") {
            out->push_back({name, {cw::ConvPath::Auto, cw::ConvPrecision::Fp32}});
        } else if (name == "bf16") {
            if (cw::onednn_conv::cpu_has_bf16())
                out->push_back({name, {cw::ConvPath::OneDnn, cw::ConvPrecision::Bf16}});
            else
                std::fprintf(stderr, "bf16 convolutions left out: this CPU has no AVX512_BF16\n");
        } else {
            *error = "unknown convolution setting '" + name + "' (expected native, onednn, auto, bf16)";
            return false;
        }
    }
    return true;
}

}  // namespace cw_bench
