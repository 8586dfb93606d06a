// Convolution as im2col + one OpenBLAS GEMM per chunk of samples. Chunks are sized so each GEMM has a few
// thousand columns (small feature maps would otherwise give skinny, slow GEMMs) within a bounded workspace.
// Which convolutions go elsewhere (Winograd, oneDNN, the direct data gradient onto few channels) is decided here
// too: use_winograd, uses_onednn and thin_conv_data::applies below.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/onednn_conv.h"
#include "engine/cpu/scratch.h"
#include "engine/cpu/thin_conv_data.h"
#include "engine/cpu/winograd.h"
#include "engine/error.h"

namespace cw {

namespace {
// Measured on the 2-core machine: 4096 columns per GEMM beat 1024 and 16384 (ResNet-18 step within noise otherwise).
constexpr int64_t kTargetColumns = 4096;
constexpr int64_t kMaxWorkspaceFloats = int64_t(16) << 20;  // 64 MiB per buffer

int64_t samples_per_chunk(const ConvGeometry& g) {
    const int64_t p = g.out_h() * g.out_w();
    const int64_t crs = g.c * g.r * g.s;
    int64_t nb = std::max<int64_t>(1, (kTargetColumns + p - 1) / p);
    nb = std::min(nb, std::max<int64_t>(1, kMaxWorkspaceFloats / std::max<int64_t>(1, crs * p)));
    nb = std::min(nb, std::max<int64_t>(1, kMaxWorkspaceFloats / std::max<int64_t>(1, g.k * p)));
    return std::min(nb, g.n);
}

// col[(c*R + r)*S + s, nn*P + oh*OW + ow] = x[n0+nn, c, oh*stride - pad + r, ow*stride - pad + s] (0 outside)
void im2col(const float* x, float* col, const ConvGeometry& g, int64_t n0, int64_t nb) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), p = oh_n * ow_n, cols = nb * p;
    const int64_t rows = g.c * g.r * g.s;
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t c = row / (g.r * g.s), kr = (row / g.s) % g.r, ks = row % g.s;
        // Output columns whose input column stays inside the image: ow in [ow_lo, ow_hi).
        const int64_t ow_lo = std::min(ow_n, std::max<int64_t>(0, (g.pad - ks + g.stride - 1) / g.stride));
        const int64_t ow_hi = std::max(ow_lo, std::min(ow_n, (g.w + g.pad - ks + g.stride - 1) / g.stride));
        for (int64_t nn = 0; nn < nb; ++nn) {
            const float* xs = x + ((n0 + nn) * g.c + c) * g.h * g.w;
            float* dst = col + row * cols + nn * p;
            for (int64_t oh = 0; oh < oh_n; ++oh) {
                float* d = dst + oh * ow_n;
                const int64_t ih = oh * g.stride - g.pad + kr;
                if (ih < 0 || ih >= g.h) {
                    std::memset(d, 0, sizeof(float) * ow_n);
                    continue;
                }
                const float* src = xs + ih * g.w - g.pad + ks;
                for (int64_t ow = 0; ow < ow_lo; ++ow) d[ow] = 0.f;
                if (g.stride == 1) {
                    std::memcpy(d + ow_lo, src + ow_lo, sizeof(float) * (ow_hi - ow_lo));
                } else {
                    for (int64_t ow = ow_lo; ow < ow_hi; ++ow) d[ow] = src[ow * g.stride];
                }
                for (int64_t ow = ow_hi; ow < ow_n; ++ow) d[ow] = 0.f;
            }
        }
    }
}

// gx[n0+nn, c, ...] = sum of col entries that im2col read from there. Parallel over channels: the rows of one
// channel are the only ones that write into that channel's plane.
void col2im(const float* col, float* gx, const ConvGeometry& g, int64_t n0, int64_t nb) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), p = oh_n * ow_n, cols = nb * p;
#pragma omp parallel for collapse(2) schedule(static) if (g.c * nb * g.h * g.w > kParallelGrain / 4)
    for (int64_t nn = 0; nn < nb; ++nn)
        for (int64_t c = 0; c < g.c; ++c) {
            float* gs = gx + ((n0 + nn) * g.c + c) * g.h * g.w;
            std::memset(gs, 0, sizeof(float) * g.h * g.w);
            for (int64_t kr = 0; kr < g.r; ++kr)
                for (int64_t ks = 0; ks < g.s; ++ks) {
                    const int64_t row = (c * g.r + kr) * g.s + ks;
                    const float* src = col + row * cols + nn * p;
                    const int64_t ow_lo = std::min(ow_n, std::max<int64_t>(0, (g.pad - ks + g.stride - 1) / g.stride));
                    const int64_t ow_hi = std::max(ow_lo, std::min(ow_n, (g.w + g.pad - ks + g.stride - 1) / g.stride));
                    for (int64_t oh = 0; oh < oh_n; ++oh) {
                        const int64_t ih = oh * g.stride - g.pad + kr;
                        if (ih < 0 || ih >= g.h) continue;
                        float* __restrict d = gs + ih * g.w - g.pad + ks;
                        const float* __restrict s = src + oh * ow_n;
                        if (g.stride == 1) {  // unit stride vectorises
                            for (int64_t ow = ow_lo; ow < ow_hi; ++ow) d[ow] += s[ow];
                        } else {
                            for (int64_t ow = ow_lo; ow < ow_hi; ++ow) d[ow * g.stride] += s[ow];
                        }
                    }
                }
        }
}

// [nb, K, P] (NCHW sample-major) <-> [K, nb*P] (GEMM layout)
void samples_to_gemm(const float* src, float* dst, int64_t nb, int64_t k, int64_t p) {
#pragma omp parallel for collapse(2) schedule(static) if (nb * k * p > kParallelGrain)
    for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t nn = 0; nn < nb; ++nn) std::memcpy(dst + kk * nb * p + nn * p, src + (nn * k + kk) * p, sizeof(float) * p);
}
void gemm_to_samples(const float* src, float* dst, int64_t nb, int64_t k, int64_t p) {
#pragma omp parallel for collapse(2) schedule(static) if (nb * k * p > kParallelGrain)
    for (int64_t nn = 0; nn < nb; ++nn)
        for (int64_t kk = 0; kk < k; ++kk) std::memcpy(dst + (nn * k + kk) * p, src + kk * nb * p + nn * p, sizeof(float) * p);
}

bool needs_im2col(const ConvGeometry& g) { return !(g.r == 1 && g.s == 1 && g.stride == 1 && g.pad == 0); }

thread_local std::vector<float> t_col, t_gemm_out;
}  // namespace

bool CpuBackend::winograd_default() {
    const char* v = std::getenv("CLASSWISE_WINOGRAD");
    if (!v || !*v || std::strcmp(v, "1") == 0) return true;
    if (std::strcmp(v, "0") == 0) return false;
    std::fprintf(stderr, "classwise: CLASSWISE_WINOGRAD must be 0 or 1, got '%s'; using 1\n", v);
    return true;
}

bool CpuBackend::use_winograd(const ConvGeometry& g) const { return winograd_enabled_ && winograd::applicable(g); }

ConvPath parse_conv_path(const char* text) {
    const std::string v = text ? text : "";
    // oneDNN by default: measured on a quiet 2-core Zen 5 it ran the PGD-10 AT step 1.40x (small CNN) and 1.41x
    // (PreAct ResNet-18) faster than the native path, and faster than auto's mix (docs/speed.md).
    if (v.empty() || v == "onednn") return ConvPath::OneDnn;
    if (v == "native") return ConvPath::Native;
    if (v == "auto") return ConvPath::Auto;
    throw Error("CLASSWISE_CONV must be auto, onednn or native, got '" + v + "'");
}

ConvPrecision parse_precision_flag(const std::string& name, const std::string& value) {
    if (value == "fp32") return ConvPrecision::Fp32;
    if (value == "bf16") return ConvPrecision::Bf16;
    throw Error(name + " must be fp32 or bf16, got '" + value + "'");
}

ConvPrecision parse_conv_precision(const char* text) {
    const std::string v = text ? text : "";
    return v.empty() ? ConvPrecision::Fp32 : parse_precision_flag("CLASSWISE_PRECISION", v);
}

ConvPolicy resolve_conv_policy(ConvPath path, ConvPrecision precision, bool cpu_has_bf16, std::string* note,
                               const std::string& asked_by) {
    if (note) note->clear();
    if (precision == ConvPrecision::Bf16 && !cpu_has_bf16) {
        if (note) *note = "classwise: " + asked_by + " but this CPU has no AVX512_BF16: convolutions run in fp32";
        precision = ConvPrecision::Fp32;
    }
    return {path, precision};
}

std::string describe(const ConvPolicy& p) {
    const char* path = p.path == ConvPath::Native ? "native" : p.path == ConvPath::OneDnn ? "onednn" : "auto";
    return std::string("CLASSWISE_CONV=") + path +
           (p.precision == ConvPrecision::Bf16 ? " CLASSWISE_PRECISION=bf16" : " CLASSWISE_PRECISION=fp32");
}

ConvPolicy CpuBackend::conv_policy_from_environment() {
    const ConvPath path = parse_conv_path(std::getenv("CLASSWISE_CONV"));
    const ConvPrecision precision = parse_conv_precision(std::getenv("CLASSWISE_PRECISION"));
    std::string note;
    const ConvPolicy policy =
        resolve_conv_policy(path, precision, onednn_conv::cpu_has_bf16(), &note);
    if (!note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
    return policy;
}

// Auto's split follows a probe of oneDNN 2.6.3 against this code on 2 threads: oneDNN fp32 was 1.4-8x faster on
// strided, 1x1, few-channel and 4x4 layers and on the small CNN's 32-channel maps, and level with Winograd on 3x3
// stride-1 layers of 64-256 channels on 8x8 to 32x32 maps.
bool CpuBackend::uses_onednn(const ConvGeometry& g) const {
    if (g.n == 0) return false;  // nothing to compute (a zero filter gradient): not worth a primitive
    if (conv_policy_.precision == ConvPrecision::Bf16) return true;
    switch (conv_policy_.path) {
        case ConvPath::Native: return false;
        case ConvPath::OneDnn: return true;
        case ConvPath::Auto: return !(use_winograd(g) && g.c >= 64 && g.c * g.out_h() * g.out_w() >= 16384);
    }
    return false;
}

void CpuBackend::conv2d_forward(const float* x, const float* w, float* y, const ConvGeometry& g) {
    if (uses_onednn(g)) return onednn_conv::forward(x, w, y, g, conv_policy_.precision);
    if (use_winograd(g)) return winograd::forward(x, w, y, g);
    const int64_t p = g.out_h() * g.out_w(), crs = g.c * g.r * g.s, nb_max = samples_per_chunk(g);
    for (int64_t n0 = 0; n0 < g.n; n0 += nb_max) {
        const int64_t nb = std::min(nb_max, g.n - n0);
        const float* col = x + n0 * g.c * g.h * g.w;  // a single 1x1/stride-1 sample is its own column matrix
        if (needs_im2col(g) || nb > 1) {
            float* buf = grown(t_col, crs * nb * p);
            im2col(x, buf, g, n0, nb);
            col = buf;
        }
        float* out = nb == 1 ? y + n0 * g.k * p : grown(t_gemm_out, g.k * nb * p);
        gemm(false, false, g.k, nb * p, crs, 1.f, w, crs, col, nb * p, 0.f, out, nb * p);
        if (nb > 1) gemm_to_samples(out, y + n0 * g.k * p, nb, g.k, p);
    }
}

// Both gradients chunk by chunk; gx or gw may be null. One transposed copy of gy serves both GEMMs.
void CpuBackend::conv2d_backward(const float* x, const float* w, const float* gy, float* gx, float* gw,
                                 const ConvGeometry& g) {
    if (gx && thin_conv_data::applies(g)) {
        thin_conv_data::backward_data(gy, w, gx, g, conv_policy_.precision);
        if (gw) conv2d_backward_filter(x, gy, gw, g, false);
        return;
    }
    if (uses_onednn(g)) {
        if (gx) onednn_conv::backward_data(gy, w, gx, g, conv_policy_.precision);
        if (gw) onednn_conv::backward_weights(x, gy, gw, g, false, conv_policy_.precision);
        return;
    }
    if (use_winograd(g)) {
        if (gx) winograd::backward_data(gy, w, gx, g);
        if (gw) winograd::backward_filter(x, gy, gw, g, false);
        return;
    }
    backward_chunks(x, w, gy, gx, gw, g, false);
}

// conv2d_relu. Forward: oneDNN's output comes back into NCHW with the bias and relu applied (no pass of their own)
// where its layout allows. Backward: a first layer's data gradient gates relu's gradient as it copies each plane,
// and under bf16 relu's gradient is gated while it is converted for oneDNN, once for both directions, with the bias
// sum in the same pass; whatever is left runs as the three steps (Backend's default).
void CpuBackend::conv2d_bias_relu_forward(const float* x, const float* w, const float* bias, float* y,
                                          const ConvGeometry& g) {
    if (uses_onednn(g) && onednn_conv::forward_bias_relu(x, w, bias, y, g, conv_policy_.precision)) return;
    Backend::conv2d_bias_relu_forward(x, w, bias, y, g);
}

// conv2d_relu_maxpool: the same output kernel also takes the pool, so the full-size output is never written.
void CpuBackend::conv2d_bias_relu_maxpool_forward(const float* x, const float* w, const float* bias, float* y,
                                                  int32_t* argmax, const ConvGeometry& g) {
    if (uses_onednn(g) && onednn_conv::forward_bias_relu(x, w, bias, y, g, conv_policy_.precision, argmax)) return;
    Backend::conv2d_bias_relu_maxpool_forward(x, w, bias, y, argmax, g);
}

// Under bf16 relu's gradient is scattered straight into oneDNN's bf16 layout, no full-size fp32 gradient made, except
// where a first layer's thin kernel takes the data gradient (it reads NCHW fp32).
void CpuBackend::conv2d_relu_maxpool_backward(const float* x, const float* w, const float* y, const int32_t* argmax,
                                              const float* gy, float* gx, float* gw, float* gbias,
                                              const ConvGeometry& g) {
    if (conv_policy_.precision == ConvPrecision::Bf16 && !(gx && thin_conv_data::applies(g)) &&
        onednn_conv::relu_maxpool_backward_bf16(x, w, y, argmax, gy, gx, gw, gbias, g))
        return;
    Backend::conv2d_relu_maxpool_backward(x, w, y, argmax, gy, gx, gw, gbias, g);
}

void CpuBackend::conv2d_relu_backward(const float* x, const float* w, const float* y, const float* gy, float* gx,
                                      float* gw, float* gbias, const ConvGeometry& g) {
    if (gx && thin_conv_data::applies(g)) {
        thin_conv_data::backward_data(gy, w, gx, g, conv_policy_.precision, y);
        gx = nullptr;
    }
    if (!gx && !gw && !gbias) return;
    if (conv_policy_.precision == ConvPrecision::Bf16 &&
        onednn_conv::relu_backward_bf16(x, w, y, gy, gx, gw, gbias, g))
        return;
    Backend::conv2d_relu_backward(x, w, y, gy, gx, gw, gbias, g);
}

void CpuBackend::conv2d_backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g) {
    if (thin_conv_data::applies(g)) return thin_conv_data::backward_data(gy, w, gx, g, conv_policy_.precision);
    if (uses_onednn(g)) return onednn_conv::backward_data(gy, w, gx, g, conv_policy_.precision);
    if (use_winograd(g)) return winograd::backward_data(gy, w, gx, g);
    backward_chunks(nullptr, w, gy, gx, nullptr, g, false);
}

void CpuBackend::conv2d_backward_filter(const float* x, const float* gy, float* gw, const ConvGeometry& g,
                                        bool accumulate) {
    if (uses_onednn(g)) return onednn_conv::backward_weights(x, gy, gw, g, accumulate, conv_policy_.precision);
    if (use_winograd(g)) return winograd::backward_filter(x, gy, gw, g, accumulate);
    backward_chunks(x, nullptr, gy, nullptr, gw, g, accumulate);
}

void CpuBackend::backward_chunks(const float* x, const float* w, const float* gy, float* gx, float* gw,
                                 const ConvGeometry& g, bool accumulate_gw) {
    const int64_t p = g.out_h() * g.out_w(), crs = g.c * g.r * g.s, nb_max = samples_per_chunk(g);
    if (gw && g.n == 0 && !accumulate_gw) fill(gw, 0.f, g.k * crs);
    for (int64_t n0 = 0; n0 < g.n; n0 += nb_max) {
        const int64_t nb = std::min(nb_max, g.n - n0);
        const float* gyc = gy + n0 * g.k * p;
        if (nb > 1) {
            float* buf = grown(t_gemm_out, g.k * nb * p);
            samples_to_gemm(gyc, buf, nb, g.k, p);
            gyc = buf;
        }
        if (gw) {  // gw (+)= gy x col^T
            const float* col = x + n0 * g.c * g.h * g.w;
            if (needs_im2col(g) || nb > 1) {
                float* buf = grown(t_col, crs * nb * p);
                im2col(x, buf, g, n0, nb);
                col = buf;
            }
            const float beta = (n0 == 0 && !accumulate_gw) ? 0.f : 1.f;
            gemm(false, true, g.k, crs, nb * p, 1.f, gyc, nb * p, col, nb * p, beta, gw, crs);
        }
        if (gx) {  // gcol = W^T gy, then scattered back onto the image
            if (!needs_im2col(g) && nb == 1) {
                gemm(true, false, crs, p, g.k, 1.f, w, crs, gyc, p, 0.f, gx + n0 * g.c * g.h * g.w, p);
                continue;
            }
            float* gcol = grown(t_col, crs * nb * p);
            gemm(true, false, crs, nb * p, g.k, 1.f, w, crs, gyc, nb * p, 0.f, gcol, nb * p);
            col2im(gcol, gx, g, n0, nb);
        }
    }
}

}  // namespace cw
