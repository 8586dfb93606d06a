// What the fused convolution tests (test_conv_relu.cpp, test_conv_relu_maxpool.cpp) share: the CPU backend's
// convolution settings, their test shapes and random inputs, and a count of differing values that takes NaN as
// equal to NaN.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/onednn_conv.h"
#include "tests/test_util.h"

namespace cw_test {

// Restores the backend's policy and thread count when a test ends, however it ends.
struct Setting {
    cw::ConvPolicy saved = cw::cpu_backend().conv_policy();
    int threads = cw::cpu_threads();
    explicit Setting(cw::ConvPolicy p) { cw::cpu_backend().set_conv_policy(p); }
    ~Setting() {
        cw::cpu_backend().set_conv_policy(saved);
        cw::set_cpu_threads(threads);
    }
};

struct Shape4 {
    int64_t n, c, h, w, k, r, stride, pad;
};

inline std::string describe(const Shape4& s, bool bias) {
    return "N" + std::to_string(s.n) + " C" + std::to_string(s.c) + " " + std::to_string(s.h) + "x" +
           std::to_string(s.w) + " K" + std::to_string(s.k) + " R" + std::to_string(s.r) + " stride " +
           std::to_string(s.stride) + " pad " + std::to_string(s.pad) + (bias ? " bias" : " no bias");
}

// Equal values, or both NaN. (== also takes -0 for 0: a relu may write either.)
inline bool same(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

inline int64_t differing(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    int64_t n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += !same(a[i], b[i]);
    return n;
}

// Random inputs of a convolution test of shape s, drawn in this order from consecutive seeds (seed advances): x with
// sd 1, w with sd 0.5, b with sd 0.3 (with_bias). Filter 0 is then all zeros with bias 0, so relu's input is exactly 0
// on a whole channel; with tie_channel filter 1 too, with bias 0.25: a channel of equal positive values.
struct ConvInputs {
    cw::Tensor x, w, b;
};
inline ConvInputs conv_inputs(const Shape4& s, bool with_bias, uint64_t& seed, bool tie_channel) {
    cw::Tensor x = randn({s.n, s.c, s.h, s.w}, seed++, 1.f, false);
    std::vector<float> w = randn({s.k, s.c, s.r, s.r}, seed++, 0.5f, false).to_vector();
    std::vector<float> b = with_bias ? randn({s.k}, seed++, 0.3f, false).to_vector() : std::vector<float>{};
    const int zeroed = tie_channel ? 2 : 1;
    std::fill(w.begin(), w.begin() + zeroed * s.c * s.r * s.r, 0.f);
    if (with_bias) b[0] = 0.f;
    if (with_bias && tie_channel) b[1] = 0.25f;
    return {x, cw::Tensor::from_vector(w, {s.k, s.c, s.r, s.r}),
            with_bias ? cw::Tensor::from_vector(b, {s.k}) : cw::Tensor()};
}

// Every CPU convolution setting this CPU runs: native fp32, oneDNN fp32, and bf16 where the CPU has it.
inline std::vector<std::pair<std::string, cw::ConvPolicy>> cpu_conv_settings() {
    std::vector<std::pair<std::string, cw::ConvPolicy>> settings = {
        {"native fp32", {cw::ConvPath::Native, cw::ConvPrecision::Fp32}},
        {"oneDNN fp32", {cw::ConvPath::OneDnn, cw::ConvPrecision::Fp32}}};
    if (cw::onednn_conv::cpu_has_bf16())
        settings.push_back({"bf16", {cw::ConvPath::OneDnn, cw::ConvPrecision::Bf16}});
    return settings;
}

}  // namespace cw_test
