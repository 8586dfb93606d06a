// The direct data gradient (thin_conv_data.h). For input row ih and a block of 32 input columns from iw0:
//   gx[n, c, ih, iw] = sum over k, r, s of w[k, c, r, s] * gy[n, k, ih + pad - r, iw + pad - s]
// over the output positions inside the output. Each filter's output-gradient plane is first copied into a buffer
// with a zero border, so a term from outside the output reads a zero and no load needs a mask. Each element sums
// its terms in one fixed order, whatever the thread count: in fp32 filter k, then row r, then column s; in bf16 the
// filters go in pairs (k, k + 1), each pair's terms by r, then s, then k before k + 1 (one VDPBF16PS adds both). In
// bf16 the output gradient and the filters are rounded to bf16 as they are copied, with the instruction oneDNN's
// reorders use (VCVTNEPS2BF16), and summed in fp32: the numbers of oneDNN's bf16 convolution up to summation order.
#include "engine/cpu/thin_conv_data.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/cpu/avx512.h"
#include "engine/error.h"

namespace cw::thin_conv_data {

namespace {

// Compiled for AVX-512 with BF16. The fp32 instantiation of plane() holds no BF16 instruction (the rounding and
// pairing are behind `if constexpr`, VDPBF16PS in Bf16PairTerms alone), so it runs on any AVX-512 CPU with BW and VL; applies() checks for those, and the bf16
// one runs only under the bf16 policy, which needs AVX512_BF16 (backward_data checks).
#define CW_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,fma")))

constexpr int64_t kMaxChannels = 4, kMaxFilterWidth = 16, kBlock = 32;
constexpr int kRows = 4, kMaxBlocks = 4;

// v rounded to bf16 and widened back: the bf16 value in the upper half of each fp32 lane.
CW_AVX512_TARGET inline __m512 rounded_to_bf16(__m512 v) {
    const __m256i half = (__m256i)_mm512_cvtneps_pbh(v);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
}

CW_AVX512_TARGET void round_to_bf16(float* v, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = avx512::first_lanes(n - i);
        _mm512_mask_storeu_ps(v + i, m, rounded_to_bf16(_mm512_maskz_loadu_ps(m, v + i)));
    }
}

// How each precision feeds the kernel below. A unit is the filters whose terms one instruction adds:
//  - fp32: one filter; the zero-bordered plane holds its output gradient, a tap is its weight, a term one FMA;
//  - bf16: two filters, k and k + 1; each element of the plane holds both filters' output gradients rounded to
//    bf16, k's in the upper half, a tap both weights likewise, and VDPBF16PS adds the upper halves' product, then
//    the lower's, each with one rounding (an FMA's; the products of two bf16 values are exact in fp32): the terms
//    of two FMAs, k's then k + 1's, at half the instructions and loads. An odd last filter pairs with zeros.
struct Fp32Terms {
    static constexpr int64_t kFilters = 1;
    CW_AVX512_TARGET static __m512 add(__m512 acc, __m512 gy, __m512 tap) { return _mm512_fmadd_ps(tap, gy, acc); }
};
struct Bf16PairTerms {
    static constexpr int64_t kFilters = 2;
    CW_AVX512_TARGET static __m512 add(__m512 acc, __m512 gy, __m512 tap) {
        return _mm512_dpbf16_ps(acc, (__m512bh)gy, (__m512bh)tap);
    }
};

// Two fp32 vectors rounded to bf16 and packed into one: a's value in each lane's upper half, b's in its lower.
CW_AVX512_TARGET inline __m512 bf16_pair(__m512 a, __m512 b) {
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(rounded_to_bf16(a)),
                                               _mm512_srli_epi32(_mm512_castps_si512(rounded_to_bf16(b)), 16)));
}

// The m lanes of gy_k from `at`, gated by relu's output relu_k where there is one.
CW_AVX512_TARGET inline __m512 gated_gradient(const float* gy_k, const float* relu_k, int64_t at, __mmask16 m) {
    const __m512 v = _mm512_maskz_loadu_ps(m, gy_k + at);
    return relu_k ? avx512::relu_gated(v, _mm512_maskz_loadu_ps(m, relu_k + at)) : v;
}

// A unit's output-gradient planes copied into `padded` (width `pitch`) with their origin at (pad_rows, pad_cols):
// the rows and columns around them stay zero, so the kernel's loads need no masks, and in bf16 each value is rounded
// and paired once here instead of at every one of its R x S uses. `gy_k` is the unit's first filter's plane;
// `second` says whether a second filter follows it (bf16). With relu_k (the planes of a relu's output that gy is the
// incoming gradient of: the conv2d_relu op), each value is relu's gradient instead: gy where relu_k is above 0 or
// NaN, else 0.
template <class Terms>
CW_AVX512_TARGET void copy_unit(const float* gy_k, const float* relu_k, bool second, int64_t oh_n, int64_t ow_n,
                                float* padded, int64_t pitch, int64_t pad_rows, int64_t pad_cols) {
    const int64_t plane_n = oh_n * ow_n;
    for (int64_t oh = 0; oh < oh_n; ++oh) {
        float* to = padded + (oh + pad_rows) * pitch + pad_cols;
        for (int64_t i = 0; i < ow_n; i += 16) {
            const __mmask16 m = avx512::first_lanes(ow_n - i);
            const int64_t at = oh * ow_n + i;
            if constexpr (Terms::kFilters == 1)
                _mm512_mask_storeu_ps(to + i, m, gated_gradient(gy_k, relu_k, at, m));
            else
                _mm512_mask_storeu_ps(to + i, m,
                                      bf16_pair(gated_gradient(gy_k, relu_k, at, m),
                                                second ? gated_gradient(gy_k + plane_n, relu_k ? relu_k + plane_n : nullptr,
                                                                        at, m)
                                                       : _mm512_setzero_ps()));
        }
    }
}

// One input plane: gx_plane [H, W] of sample n, channel c. Unit outermost: its output-gradient planes are copied into
// a zero-bordered buffer that stays in L1 (`padded`, zeroed by the caller) while the input plane's partial sums are
// read and written back once per unit. Inside, four input rows at a time: eight independent sums (4 rows x 2
// registers) keep the FMA units busy, and the rows share the output-gradient rows they read. Input row ih, column
// iw reads padded row ih + pad - r + (R - 1), column iw + pad - s + (S - 1); the rows past the input's last (the
// final group of four) are computed from zeros and never stored. `taps` holds channel c's taps, [unit][r][s], as
// Terms reads them (fp32 weights, or bf16 pairs).
template <class Terms>
CW_AVX512_TARGET void plane(const float* gy_n, const float* relu_n, const float* taps, float* gx_plane,
                            const ConvGeometry& g, float* padded, int64_t pitch) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w(), taps_n = g.s, rows_n = g.h, width = g.w, pad = g.pad;
    const int64_t blocks = (width + kBlock - 1) / kBlock, plane_n = oh_n * ow_n;
    for (int64_t k = 0, unit = 0; k < g.k; k += Terms::kFilters, ++unit) {
        copy_unit<Terms>(gy_n + k * plane_n, relu_n ? relu_n + k * plane_n : nullptr, k + 1 < g.k, oh_n, ow_n,
                         padded, pitch, g.r - 1, taps_n - 1);
        const float* taps_k = taps + unit * g.r * taps_n;
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t iw0 = b * kBlock;
            const __mmask16 out0 = avx512::first_lanes(width - iw0), out1 = avx512::first_lanes(width - iw0 - 16);
            for (int64_t ih0 = 0; ih0 < rows_n; ih0 += kRows) {
                // The rows' sums so far (none before the first unit), then this unit's terms, r then s.
                __m512 acc[kRows][2];
#pragma GCC unroll 4
                for (int j = 0; j < kRows; ++j) {
                    const bool inside = k > 0 && ih0 + j < rows_n;
                    const float* out = gx_plane + (ih0 + j) * width + iw0;
                    acc[j][0] = inside ? _mm512_maskz_loadu_ps(out0, out) : _mm512_setzero_ps();
                    acc[j][1] = inside ? _mm512_maskz_loadu_ps(out1, out + 16) : _mm512_setzero_ps();
                }
                for (int64_t r = 0; r < g.r; ++r) {
                    const float* row0 = padded + (ih0 + pad - r + g.r - 1) * pitch + iw0 + pad + taps_n - 1;
                    const float* taps_r = taps_k + r * taps_n;
                    for (int64_t s = 0; s < taps_n; ++s) {
                        const __m512 tap = _mm512_set1_ps(taps_r[s]);
#pragma GCC unroll 4
                        for (int j = 0; j < kRows; ++j) {
                            const float* at = row0 + j * pitch - s;
                            acc[j][0] = Terms::add(acc[j][0], _mm512_loadu_ps(at), tap);
                            acc[j][1] = Terms::add(acc[j][1], _mm512_loadu_ps(at + 16), tap);
                        }
                    }
                }
#pragma GCC unroll 4
                for (int j = 0; j < kRows; ++j) {
                    if (ih0 + j >= rows_n) break;
                    float* out = gx_plane + (ih0 + j) * width + iw0;
                    _mm512_mask_storeu_ps(out, out0, acc[j][0]);
                    _mm512_mask_storeu_ps(out + 16, out1, acc[j][1]);
                }
            }
        }
    }
}

// The taps, [c][unit][r][s], as Terms reads them: the fp32 weights, or in bf16 each pair of filters' weights
// rounded (by round_to_bf16, the kernel's own instruction) and packed, filter k in the upper half, an odd last filter
// with zeros.
std::vector<float> unit_taps(const float* w, const ConvGeometry& g, bool bf16) {
    const int64_t rs = g.r * g.s, filters = bf16 ? 2 : 1, units = (g.k + filters - 1) / filters;
    std::vector<float> rounded(w, w + g.k * g.c * rs);
    if (bf16) round_to_bf16(rounded.data(), static_cast<int64_t>(rounded.size()));
    auto bits = [&](int64_t k, int64_t c, int64_t i) {
        uint32_t b = 0;
        if (k < g.k) std::memcpy(&b, &rounded[static_cast<size_t>((k * g.c + c) * rs + i)], sizeof b);
        return b;
    };
    std::vector<float> taps(static_cast<size_t>(g.c * units * rs));
    for (int64_t c = 0; c < g.c; ++c)
        for (int64_t u = 0; u < units; ++u)
            for (int64_t i = 0; i < rs; ++i) {
                const int64_t k = u * filters;
                const uint32_t packed = bf16 ? (bits(k, c, i) & 0xFFFF0000u) | (bits(k + 1, c, i) >> 16) : bits(k, c, i);
                std::memcpy(&taps[static_cast<size_t>((c * units + u) * rs + i)], &packed, sizeof packed);
            }
    return taps;
}

// The zero-bordered buffer's shape: rows R - 1 above the output and enough below for the last group of four input
// rows (input row ih reads up to row ih + pad + R - 1); columns S - 1 left of the output and enough right for the
// last block's two registers, rounded to 16 floats.
struct Padding {
    int64_t rows, pitch;
};
Padding padding(const ConvGeometry& g) {
    const int64_t blocks = (g.w + kBlock - 1) / kBlock, last_row = (g.h + kRows - 1) / kRows * kRows - 1;
    const int64_t rows = std::max(g.out_h(), last_row + g.pad + 1) + g.r - 1;
    const int64_t cols = std::max(g.out_w(), blocks * kBlock + g.pad) + g.s - 1;
    return {rows, (cols + 15) / 16 * 16};
}

}  // namespace

bool applies(const ConvGeometry& g) {
    static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                               __builtin_cpu_supports("avx512vl");
    return avx512 && g.stride == 1 && g.c <= kMaxChannels && g.s <= kMaxFilterWidth && g.w <= kMaxBlocks * kBlock &&
           g.k > 0;
}

void backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g, onednn_conv::Precision p,
                   const float* relu_output) {
    const bool bf16 = p == onednn_conv::Precision::Bf16;
    if (bf16 && !onednn_conv::cpu_has_bf16()) throw Error("thin_conv_data: bf16 asked for on a CPU without AVX512_BF16");
    const std::vector<float> taps = unit_taps(w, g, bf16);  // the filters once here; the output gradient per plane
    const int64_t taps_per_channel = static_cast<int64_t>(taps.size()) / g.c;
    const Padding shape = padding(g);
    const int64_t planes = g.n * g.c, out_plane = g.out_h() * g.out_w();
#pragma omp parallel if (planes > 1)
    {
        std::vector<float> padded(static_cast<size_t>(shape.rows * shape.pitch), 0.f);  // borders stay zero
#pragma omp for schedule(static)
        for (int64_t i = 0; i < planes; ++i) {
            const int64_t n = i / g.c, c = i % g.c;
            (bf16 ? plane<Bf16PairTerms> : plane<Fp32Terms>)(
                gy + n * g.k * out_plane, relu_output ? relu_output + n * g.k * out_plane : nullptr,
                taps.data() + c * taps_per_channel, gx + i * g.h * g.w, g, padded.data(), shape.pitch);
        }
    }
}

}  // namespace cw::thin_conv_data
