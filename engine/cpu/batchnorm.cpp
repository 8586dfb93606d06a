// Batch norm over an [N, C, HW] view: statistics per channel, each row (one image's plane) summed in float lanes
// (engine/cpu/lane_sum.h), the rows accumulated in double for stability. With `relu` the ReLU after it runs in the
// same passes (batch_norm_relu).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

#include "engine/batchnorm_math.h"
#include "engine/cpu/batchnorm.h"
#include "engine/cpu/avx512.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/lane_sum.h"
#include "engine/cpu/onednn_conv.h"
#include "engine/layout_copy.h"

namespace cw {

namespace batchnorm_cpu {

namespace {
std::atomic<bool> portable_only{false};
}  // namespace

bool wide() {
    static const bool cpu = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vl");
    return cpu && !portable_only.load(std::memory_order_relaxed);
}

PortableOnly::PortableOnly() : previous_(portable_only.exchange(true)) {}
PortableOnly::~PortableOnly() { portable_only.store(previous_); }

}  // namespace batchnorm_cpu

namespace {

using bn::ChannelAffine;

// The gradient reaching batch norm's output: gy, or with the fused ReLU zero where the forward clamped
// (engine/batchnorm_math.h: the forward's own arithmetic). Both operands are loaded unconditionally so the select
// vectorises.
template <bool Relu>
inline float gated(const float* x, const float* gy, int64_t i, const ChannelAffine& affine) {
    const float g = gy[i];
    return Relu ? bn::gated(g, x[i], affine) : g;
}

// f(std::true_type) or f(std::false_type): a loop specialised for each, so the ReLU test is not made per element.
template <class F>
void with_relu(bool relu, F f) {
    if (relu)
        f(std::true_type{});
    else
        f(std::false_type{});
}

// ---- one row (one image's plane of one channel) at a time -------------------------------------------------------

void row_normalize(const float* p, float* q, int64_t n, ChannelAffine affine, bool relu) {
    if (relu) {
        for (int64_t i = 0; i < n; ++i) q[i] = bn::relu_at(bn::affine_at(affine, p[i]));
    } else {
        for (int64_t i = 0; i < n; ++i) q[i] = bn::affine_at(affine, p[i]);
    }
}

// Σ g[i] and Σ g[i] (x[i] - mean), g the gated gradient (without the ReLU, lanes::sum_gradient of gy itself).
lanes::GradientSums row_gradient_sums(const float* x, const float* gy, int64_t n, float mean, ChannelAffine affine,
                                      bool relu) {
    if (!relu) return lanes::sum_gradient(gy, x, n, mean);
    const std::array<float, 2> s = lanes::lane_sums<2>(n, [x, gy, mean, affine](int64_t i) {
        const float g = gated<true>(x, gy, i, affine);
        return std::array<float, 2>{g, g * (x[i] - mean)};
    });
    return {s[0], s[1]};
}

// Training mode: gx = k (g - mean_g - xhat mean_g_xhat).
struct TrainInputGradient {
    float mean, invstd, k, mean_g, mean_g_xhat;
};

template <bool Relu>
inline void train_input_gradient(const float* x, const float* gy, float* gx, int64_t n, const ChannelAffine& affine,
                                 const TrainInputGradient& t) {
    for (int64_t i = 0; i < n; ++i) {
        const float xhat = (x[i] - t.mean) * t.invstd;
        gx[i] = t.k * (gated<Relu>(x, gy, i, affine) - t.mean_g - xhat * t.mean_g_xhat);
    }
}

void row_train_input_gradient(const float* x, const float* gy, float* gx, int64_t n, ChannelAffine affine, bool relu,
                              TrainInputGradient t) {
    with_relu(relu, [&](auto r) { train_input_gradient<decltype(r)::value>(x, gy, gx, n, affine, t); });
}

// Eval mode: gx = k g.
template <bool Relu>
inline void eval_input_gradient(const float* x, const float* gy, float* gx, int64_t n, const ChannelAffine& affine,
                                float k) {
    for (int64_t i = 0; i < n; ++i) gx[i] = gated<Relu>(x, gy, i, affine) * k;
}

void row_eval_input_gradient(const float* x, const float* gy, float* gx, int64_t n, ChannelAffine affine, bool relu,
                             float k) {
    with_relu(relu, [&](auto r) { eval_input_gradient<decltype(r)::value>(x, gy, gx, n, affine, k); });
}

// ---- a block of channels -------------------------------------------------------------------------------------------

// Channels [c0, c1) are one task. A channel's rows (one per image) lie a whole image apart, so with small planes (the
// deep layers' 4x4 and 8x8) one channel at a time reads scattered 64- and 256-byte pieces; a block of channels reads
// each image's part of the block as one contiguous run. Blocks span at most about 256 KB, so the passes after the
// first find them in L2; a plane of 1024 or more floats goes alone. Every channel still sums its rows in image order,
// so the block size changes no result.
struct Block {
    int64_t c0, c1;
};
constexpr int64_t kMaxBlock = 64;
int64_t block_channels(AxisView v) {
    const int64_t channel_bytes = v.outer * v.inner * static_cast<int64_t>(sizeof(float));
    return std::max<int64_t>(1, std::min<int64_t>(kMaxBlock, (int64_t(256) << 10) / std::max<int64_t>(channel_bytes, 1)));
}

// f(row offset, channel) for every row of the block: image by image, the block's channels in order.
template <class F>
void for_rows(AxisView v, Block b, F f) {
    for (int64_t n = 0; n < v.outer; ++n)
        for (int64_t c = b.c0; c < b.c1; ++c) f((n * v.dim + c) * v.inner, c);
}

// A block's passes, compiled twice: for any x86-64, and for AVX-512 where the CPU has it. `flatten` compiles
// everything the block calls (the lane sums, the row loops) into each copy with its instruction set; with AVX-512 a
// row's 16 lanes (engine/cpu/lane_sum.h) are one register and a load is a whole cache line, which these passes,
// waiting on memory, feel: on one Zen 5 VM, [128, 64, 32, 32] train forward 3.4 -> 2.6 ms, backward 5.6 -> 4.0 ms.
// The additions are the same lanes' in the same order, and the file is built without FMA contraction
// (-ffp-contract=off), so both copies give the same bits (tests/test_batch_norm_relu.cpp holds each to a reference).
template <class F>
__attribute__((flatten)) void run_portable(const F& f, Block b) {
    f(b);
}
template <class F>
__attribute__((target("avx512f,avx512bw,avx512vl,prefer-vector-width=512"), flatten)) void run_wide(const F& f, Block b) {
    f(b);
}

// f(block) over the channel blocks, in parallel when the tensor is large enough; `dynamic` keeps both threads busy
// when the blocks are few. Blocks of a multiple of `multiple` channels (16 where the bf16 copy is written).
template <class F>
void for_blocks(AxisView v, F f, int64_t multiple = 1) {
    const int64_t step = (block_channels(v) + multiple - 1) / multiple * multiple, blocks = (v.dim + step - 1) / step;
    const bool use_wide = batchnorm_cpu::wide();
#pragma omp parallel for schedule(dynamic, 1) if (v.outer * v.dim * v.inner > kParallelGrain)
    for (int64_t i = 0; i < blocks; ++i) {
        const Block b{i * step, std::min(v.dim, (i + 1) * step)};
        use_wide ? run_wide(f, b) : run_portable(f, b);
    }
}

// Mean and (biased) variance of each channel of the block, two passes, each channel's rows summed in image order.
void block_stats(const float* x, AxisView v, Block b, double* mean, double* var) {
    const int64_t m = v.outer * v.inner, width = b.c1 - b.c0;
    double s[kMaxBlock] = {}, ss[kMaxBlock] = {};
    float mf[kMaxBlock];
    for_rows(v, b, [&](int64_t at, int64_t c) { s[c - b.c0] += lanes::sum(x + at, v.inner); });
    for (int64_t j = 0; j < width; ++j) mean[j] = s[j] / static_cast<double>(m), mf[j] = static_cast<float>(mean[j]);
    for_rows(v, b, [&](int64_t at, int64_t c) {
        ss[c - b.c0] += lanes::sum_squared_deviation(x + at, v.inner, mf[c - b.c0]);
    });
    for (int64_t j = 0; j < width; ++j) var[j] = ss[j] / static_cast<double>(m);
}

// ---- the next convolution's bf16 copy ------------------------------------------------------------------------------

// Under bf16 the normalised output is also written as the next convolution's input, nChw16c bf16
// (engine/layout_copy.h), where the op asks for it: in groups of 16 channels, 16 pixels at a time, the rows
// normalised as row_normalize does (the same two roundings and relu's rule), stored, then transposed in registers
// into pixel vectors and rounded to bf16 as bf16_blocked::from_nchw rounds them.
struct Copy {
    uint16_t* data = nullptr;  // null: no copy
    std::shared_ptr<const LayoutCopy> handle;
};
Copy copy_for(const float* y, AxisView v, ConvPolicy policy) {
    Copy copy;
    if (policy.precision == ConvPrecision::Bf16 && v.inner % 16 == 0 && onednn_conv::cpu_has_bf16())
        copy.handle = onednn_conv::requested_bf16_blocked_copy(y, v.outer, v.dim, v.inner, &copy.data);
    return copy;
}

// Image n's channels [c0, c0 + 16) of y, and of the copy.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void normalize_group(
    const float* x, float* y, uint16_t* copy, AxisView v, int64_t n, int64_t c0, const ChannelAffine* affine,
    bool relu) {
    const int64_t first = (n * v.dim + c0) * v.inner;
    uint16_t* to = copy + first;  // [n][c / 16][hw][16] starts where [n][c][hw] does for c0 a multiple of 16
    for (int64_t p = 0; p < v.inner; p += 16) {
        __m512 rows[16];
        for (int j = 0; j < 16; ++j) {
            const int64_t at = first + j * v.inner + p;
            __m512 r = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(x + at), _mm512_set1_ps(affine[j].scale)),
                                     _mm512_set1_ps(affine[j].shift));
            if (relu) r = avx512::relu(r);
            _mm512_storeu_ps(y + at, r);
            rows[j] = r;
        }
        avx512::transpose16(rows);
        for (int q = 0; q < 16; ++q)
            avx512::store_bf16(to + (p + q) * 16, rows[q]);
    }
}

// The normalising pass over a block: rows, or with a copy 16-channel groups.
void normalize_block(const float* x, float* y, const Copy& copy, AxisView v, Block b, const ChannelAffine* affine,
                     bool relu) {
    if (!copy.data) {
        for_rows(v, b, [&](int64_t at, int64_t c) { row_normalize(x + at, y + at, v.inner, affine[c - b.c0], relu); });
        return;
    }
    for (int64_t n = 0; n < v.outer; ++n)
        for (int64_t c0 = b.c0; c0 < b.c1; c0 += 16)
            normalize_group(x, y, copy.data, v, n, c0, affine + (c0 - b.c0), relu);
}

ChannelAffine eval_affine(const float* gamma, const float* beta, const float* running_mean, const float* running_var,
                          int64_t c, float eps) {
    return bn::channel_affine(running_mean[c], 1.f / std::sqrt(running_var[c] + eps), gamma ? gamma[c] : 1.f,
                              beta ? beta[c] : 0.f);
}

}  // namespace

void CpuBackend::batchnorm_forward_train(const float* x, const float* gamma, const float* beta, float* y,
                                         float* save_mean, float* save_invstd, float* running_mean,
                                         float* running_var, AxisView v, float momentum, float eps, bool relu) {
    const int64_t m = v.outer * v.inner;
    const Copy copy = copy_for(y, v, conv_policy_);
    for_blocks(v, [&](Block b) {
        double mean[kMaxBlock], var[kMaxBlock];
        ChannelAffine affine[kMaxBlock];
        block_stats(x, v, b, mean, var);
        for (int64_t c = b.c0; c < b.c1; ++c) {
            const int64_t j = c - b.c0;
            const float invstd = static_cast<float>(1.0 / std::sqrt(var[j] + eps));
            save_mean[c] = static_cast<float>(mean[j]);
            save_invstd[c] = invstd;
            if (running_mean) {
                // PyTorch: running statistics use the unbiased batch variance.
                const double unbiased = m > 1 ? var[j] * m / (m - 1) : var[j];
                running_mean[c] = static_cast<float>((1 - momentum) * running_mean[c] + momentum * mean[j]);
                running_var[c] = static_cast<float>((1 - momentum) * running_var[c] + momentum * unbiased);
            }
            affine[j] = bn::channel_affine(save_mean[c], invstd, gamma ? gamma[c] : 1.f, beta ? beta[c] : 0.f);
        }
        normalize_block(x, y, copy, v, b, affine, relu);
    }, copy.data ? 16 : 1);
    if (copy.data) layout_copy::put(y, copy.handle);
}

void CpuBackend::batchnorm_forward_eval(const float* x, const float* gamma, const float* beta, float* y,
                                        const float* running_mean, const float* running_var, AxisView v,
                                        float eps, bool relu) {
    const Copy copy = copy_for(y, v, conv_policy_);
    for_blocks(v, [&](Block b) {
        ChannelAffine affine[kMaxBlock];
        for (int64_t c = b.c0; c < b.c1; ++c) affine[c - b.c0] = eval_affine(gamma, beta, running_mean, running_var, c, eps);
        normalize_block(x, y, copy, v, b, affine, relu);
    }, copy.data ? 16 : 1);
    if (copy.data) layout_copy::put(y, copy.handle);
}

void CpuBackend::batchnorm_backward_train(const float* x, const float* gamma, const float* beta, const float* gy,
                                          const float* save_mean, const float* save_invstd, float* gx,
                                          float* ggamma, float* gbeta, AxisView v, bool relu) {
    const double m = static_cast<double>(v.outer * v.inner);
    for_blocks(v, [&](Block b) {
        ChannelAffine affine[kMaxBlock];
        double sum_gy[kMaxBlock] = {}, sum_gy_xhat[kMaxBlock] = {};
        TrainInputGradient t[kMaxBlock];
        for (int64_t c = b.c0; c < b.c1; ++c)
            affine[c - b.c0] = bn::channel_affine(save_mean[c], save_invstd[c], gamma ? gamma[c] : 1.f, beta ? beta[c] : 0.f);
        for_rows(v, b, [&](int64_t at, int64_t c) {
            const int64_t j = c - b.c0;
            const lanes::GradientSums row = row_gradient_sums(x + at, gy + at, v.inner, save_mean[c], affine[j], relu);
            sum_gy[j] += row.g;
            sum_gy_xhat[j] += row.g_centered;
        });
        for (int64_t c = b.c0; c < b.c1; ++c) {
            const int64_t j = c - b.c0;
            const float invstd = save_invstd[c];
            sum_gy_xhat[j] *= invstd;
            if (ggamma) ggamma[c] = static_cast<float>(sum_gy_xhat[j]);
            if (gbeta) gbeta[c] = static_cast<float>(sum_gy[j]);
            t[j] = {save_mean[c], invstd, (gamma ? gamma[c] : 1.f) * invstd, static_cast<float>(sum_gy[j] / m),
                    static_cast<float>(sum_gy_xhat[j] / m)};
        }
        if (!gx) return;
        for_rows(v, b, [&](int64_t at, int64_t c) {
            row_train_input_gradient(x + at, gy + at, gx + at, v.inner, affine[c - b.c0], relu, t[c - b.c0]);
        });
    });
}

void CpuBackend::batchnorm_backward_eval(const float* x, const float* gamma, const float* beta, const float* gy,
                                         const float* running_mean, const float* running_var, float* gx,
                                         float* ggamma, float* gbeta, AxisView v, float eps, bool relu) {
    // The input gradient needs no statistics of the batch; the sums (reading x too) only serve gamma and beta,
    // which an eval-mode attack never asks for.
    const bool sums = ggamma || gbeta;
    for_blocks(v, [&](Block b) {
        ChannelAffine affine[kMaxBlock];
        float k[kMaxBlock], invstd[kMaxBlock];
        double sum_gy[kMaxBlock] = {}, sum_gy_xhat[kMaxBlock] = {};
        for (int64_t c = b.c0; c < b.c1; ++c) {
            const int64_t j = c - b.c0;
            invstd[j] = 1.f / std::sqrt(running_var[c] + eps);
            k[j] = (gamma ? gamma[c] : 1.f) * invstd[j];
            affine[j] = eval_affine(gamma, beta, running_mean, running_var, c, eps);
        }
        for_rows(v, b, [&](int64_t at, int64_t c) {
            const int64_t j = c - b.c0;
            if (sums) {
                const lanes::GradientSums row = row_gradient_sums(x + at, gy + at, v.inner, running_mean[c], affine[j], relu);
                sum_gy[j] += row.g;
                sum_gy_xhat[j] += double(row.g_centered) * invstd[j];
            }
            if (gx) row_eval_input_gradient(x + at, gy + at, gx + at, v.inner, affine[j], relu, k[j]);
        });
        for (int64_t c = b.c0; c < b.c1; ++c) {
            if (ggamma) ggamma[c] = static_cast<float>(sum_gy_xhat[c - b.c0]);
            if (gbeta) gbeta[c] = static_cast<float>(sum_gy[c - b.c0]);
        }
    });
}

}  // namespace cw
