// nChw16c fp32 -> NCHW fp32 with bias and relu. Each (image, block of 16 channels) is read 16 pixels at a time: a
// pixel's 16 channels are one register, so the bias is one vector add and relu one masked move, before a transpose
// in registers turns the 16 pixel vectors into 16 channel rows stored where NCHW wants them.
#include "engine/cpu/blocked_bias_relu.h"

#include <cstdint>

#include "engine/cpu/avx512.h"
#include "engine/cpu/cpu_backend.h"

namespace cw::blocked_bias_relu {

namespace {

#define CW_AVX512F_TARGET __attribute__((target("avx512f")))
// The loops that may also write the bf16 copy. Their instantiation without it holds no BF16 instruction (the
// conversion is behind `if constexpr`), so it runs on any AVX-512 CPU; the one with it only where the copy is asked
// for, which the bf16 policy allows only on CPUs with AVX512_BF16 (engine/cpu/precision_scope.h).
#define CW_AVX512_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))


// One (image, channel block): in at its [hw][16] values, out at its first channel's row, bias its 16 channels';
// with Copy, copy at its [hw][16] bf16 values.
template <bool Copy>
CW_AVX512_BF16_TARGET void convert_block(const float* in, __m512 bias, float* out, uint16_t* copy, int64_t hw) {
    const __m512 zero = _mm512_setzero_ps();
    __m512 rows[16];
    for (int64_t p = 0; p < hw; p += 16) {
        const int64_t width = hw - p < 16 ? hw - p : 16;
        for (int64_t j = 0; j < 16; ++j) {
            if (j >= width) {
                rows[j] = zero;
                continue;
            }
            rows[j] = avx512::relu(_mm512_add_ps(_mm512_loadu_ps(in + (p + j) * 16), bias));
            if constexpr (Copy) avx512::store_bf16(copy + (p + j) * 16, rows[j]);
        }
        avx512::transpose16(rows);
        const __mmask16 mask = avx512::first_lanes(width);
        for (int c = 0; c < 16; ++c) _mm512_mask_storeu_ps(out + c * hw + p, mask, rows[c]);
    }
}

// One (image, channel block) pooled: in at its [h][w][16] values, out and argmax at its first channel's pooled plane.
// Each pooled pixel's 16 channels are one register: the window's four pixels, bias and relu applied, compared in
// the pool's order, then 16 pooled pixels at a time are transposed into channel rows (the argmax as raw bits). With
// Copy, the pooled pixels also go to copy, at its [h / 2][w / 2][16] bf16 values.
template <bool Copy>
CW_AVX512_BF16_TARGET void pool_block(const float* in, __m512 bias, float* out, int32_t* argmax, uint16_t* copy,
                                      int64_t h, int64_t w) {
    const int64_t pw = w / 2, pooled = (h / 2) * pw;
    __m512 rows[16], at_rows[16];
    for (int64_t q = 0; q < pooled; q += 16) {
        const int64_t width = pooled - q < 16 ? pooled - q : 16;
        for (int64_t j = 0; j < 16; ++j) {
            if (j >= width) {
                rows[j] = at_rows[j] = _mm512_setzero_ps();
                continue;
            }
            const int64_t first = 2 * ((q + j) / pw) * w + 2 * ((q + j) % pw);  // the window's top-left pixel
            const int64_t place[4] = {first, first + 1, first + w, first + w + 1};
            __m512 best = avx512::relu(_mm512_add_ps(_mm512_loadu_ps(in + place[0] * 16), bias));
            __m512i at = _mm512_set1_epi32(static_cast<int32_t>(place[0]));
            for (int k = 1; k < 4; ++k) {
                const __m512 v = avx512::relu(_mm512_add_ps(_mm512_loadu_ps(in + place[k] * 16), bias));
                const __mmask16 take = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
                best = _mm512_mask_blend_ps(take, best, v);
                at = _mm512_mask_blend_epi32(take, at, _mm512_set1_epi32(static_cast<int32_t>(place[k])));
            }
            rows[j] = best;
            at_rows[j] = _mm512_castsi512_ps(at);
            if constexpr (Copy) avx512::store_bf16(copy + (q + j) * 16, best);
        }
        avx512::transpose16(rows);
        avx512::transpose16(at_rows);
        const __mmask16 mask = avx512::first_lanes(width);
        for (int c = 0; c < 16; ++c) {
            _mm512_mask_storeu_ps(out + c * pooled + q, mask, rows[c]);
            _mm512_mask_storeu_epi32(argmax + c * pooled + q, mask, _mm512_castps_si512(at_rows[c]));
        }
    }
}

// One (image, channel block) as it is: the transpose alone, so every bit (-0 and NaN payloads too) comes through.
// Stream: the rows go out with non-temporal stores, which skip reading each destination line before writing it (a
// copy's third pass over memory); the caller checks that the rows are whole vectors, 64-byte aligned.
template <bool Stream>
CW_AVX512F_TARGET void plain_block(const float* in, float* out, int64_t hw) {
    __m512 rows[16];
    for (int64_t p = 0; p < hw; p += 16) {
        const int64_t width = hw - p < 16 ? hw - p : 16;
        for (int64_t j = 0; j < 16; ++j) rows[j] = j < width ? _mm512_loadu_ps(in + (p + j) * 16) : _mm512_setzero_ps();
        avx512::transpose16(rows);
        const __mmask16 mask = avx512::first_lanes(width);
        for (int c = 0; c < 16; ++c) {
            if constexpr (Stream)
                _mm512_stream_ps(out + c * hw + p, rows[c]);
            else
                _mm512_mask_storeu_ps(out + c * hw + p, mask, rows[c]);
        }
    }
}

template <bool Stream>
CW_AVX512F_TARGET void convert_plain(const float* blocked, float* y, int64_t n, int64_t c, int64_t hw) {
    const int64_t blocks = c / 16;
#pragma omp parallel for collapse(2) schedule(static) if (n * c * hw > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
        for (int64_t b = 0; b < blocks; ++b)
            plain_block<Stream>(blocked + (i * blocks + b) * hw * 16, y + (i * c + b * 16) * hw, hw);
    if constexpr (Stream) _mm_sfence();  // the streamed rows visible before the next op reads them
}

// The loops over (image, channel block). They load the bias with AVX-512, so they carry the target attribute; the
// public functions below do not (the header declares them for any caller), hence the one-line forwarding.
template <bool Copy>
CW_AVX512_BF16_TARGET void convert(const float* blocked, const float* bias, float* y, uint16_t* copy, int64_t n,
                                   int64_t c, int64_t hw) {
    const int64_t blocks = c / 16;
#pragma omp parallel for collapse(2) schedule(static) if (n * c * hw > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
        for (int64_t b = 0; b < blocks; ++b)
            convert_block<Copy>(blocked + (i * blocks + b) * hw * 16,
                                bias ? _mm512_loadu_ps(bias + b * 16) : _mm512_setzero_ps(), y + (i * c + b * 16) * hw,
                                Copy ? copy + (i * blocks + b) * hw * 16 : nullptr, hw);
}

template <bool Copy>
CW_AVX512_BF16_TARGET void convert_pooled(const float* blocked, const float* bias, float* y, int32_t* argmax,
                                          uint16_t* copy, int64_t n, int64_t c, int64_t h, int64_t w) {
    const int64_t blocks = c / 16, pooled = (h / 2) * (w / 2);
#pragma omp parallel for collapse(2) schedule(static) if (n * c * h * w > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t at = (i * c + b * 16) * pooled;
            pool_block<Copy>(blocked + (i * blocks + b) * h * w * 16,
                             bias ? _mm512_loadu_ps(bias + b * 16) : _mm512_setzero_ps(), y + at, argmax + at,
                             Copy ? copy + (i * blocks + b) * pooled * 16 : nullptr, h, w);
        }
}

}  // namespace

// Outputs this large go out with non-temporal stores: they would not stay in the caches for the next op anyway
// (PreAct ResNet-18's 32 x 32 and 16 x 16 stages at batch 128: 33.5 and 16.8 MB).
constexpr int64_t kStreamBytes = int64_t(16) << 20;

bool supported(int64_t channels) {
    static const bool cpu = __builtin_cpu_supports("avx512f");
    return cpu && channels > 0 && channels % 16 == 0;
}

void to_nchw(const float* blocked, const float* bias, float* y, int64_t n, int64_t c, int64_t hw, uint16_t* bf16_copy) {
    (bf16_copy ? convert<true> : convert<false>)(blocked, bias, y, bf16_copy, n, c, hw);
}

void to_nchw_plain(const float* blocked, float* y, int64_t n, int64_t c, int64_t hw) {
    const bool stream = hw % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 64 == 0 &&
                        n * c * hw * static_cast<int64_t>(sizeof(float)) >= kStreamBytes;
    (stream ? convert_plain<true> : convert_plain<false>)(blocked, y, n, c, hw);
}

void to_nchw_maxpool(const float* blocked, const float* bias, float* y, int32_t* argmax, int64_t n, int64_t c,
                     int64_t h, int64_t w, uint16_t* bf16_copy) {
    (bf16_copy ? convert_pooled<true> : convert_pooled<false>)(blocked, bias, y, argmax, bf16_copy, n, c, h, w);
}

}  // namespace cw::blocked_bias_relu
