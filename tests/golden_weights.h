#pragma once
// The counter-based fill shared with tools/make_golden_models.py (its docstring is the specification): every
// value is a function of (tensor name, flat element index) computed with integer hashing and one double
// multiply-add rounded to float32, so PyTorch and classwise hold bit-identical weights and inputs without the
// fixture carrying any weights.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "nn/module.h"

namespace cw_golden {

inline uint64_t fnv1a64(const std::string& name) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char b : name) h = (h ^ b) * 0x100000001b3ull;
    return h;
}

// u(name, i) in [-1, 1) on a 2^-23 grid.
inline double uniform(uint64_t name_hash, uint64_t i) {
    uint64_t x = name_hash + i * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return static_cast<double>(x >> 40) / static_cast<double>(1 << 23) - 1.0;
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The values of state tensor `name` of shape `shape`, as the script's fill_value() makes them.
inline std::vector<float> fill_values(const std::string& name, const cw::Shape& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    double scale = 0, shift = 0;
    if (shape.size() >= 2) scale = std::sqrt(6.0 / static_cast<double>(n / shape[0]));
    else if (ends_with(name, ".bias") || ends_with(name, ".running_mean")) scale = 0.1;
    else if (ends_with(name, ".running_var")) scale = 0.5, shift = 1.0;
    else if (ends_with(name, ".weight")) scale = 0.2, shift = 1.0;
    else throw std::runtime_error("golden fill: no rule for state tensor '" + name + "'");
    const uint64_t h = fnv1a64(name);
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = static_cast<float>(uniform(h, uint64_t(i)) * scale + shift);
    return v;
}

// (u + 1) / 2 in [0, 1): the input batch under the name "input".
inline std::vector<float> unit_values(const std::string& name, int64_t n) {
    const uint64_t h = fnv1a64(name);
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = static_cast<float>((uniform(h, uint64_t(i)) + 1.0) / 2.0);
    return v;
}

// u itself, as float32 (the loss weights).
inline std::vector<float> signed_values(const std::string& name, int64_t n) {
    const uint64_t h = fnv1a64(name);
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = static_cast<float>(uniform(h, uint64_t(i)));
    return v;
}

// Fills every state tensor of `model` by name; integer state (BN's num_batches_tracked) becomes 0. Returns the
// sum of squares of the floating-point state, the script's checksum.
inline double fill_model(cw::nn::Module& model) {
    double sumsq = 0;
    for (auto& e : model.state()) {
        if (e.tensor->dtype() != cw::DType::F32) {
            std::vector<int32_t> zeros(static_cast<size_t>(e.tensor->numel()), 0);
            e.tensor->copy_from(cw::Tensor::from_ints(zeros, e.tensor->shape()));
            continue;
        }
        const std::vector<float> v = fill_values(e.name, e.tensor->shape());
        for (float f : v) sumsq += static_cast<double>(f) * f;
        e.tensor->copy_from(cw::Tensor::from_vector(v, e.tensor->shape()));
    }
    return sumsq;
}

}  // namespace cw_golden
