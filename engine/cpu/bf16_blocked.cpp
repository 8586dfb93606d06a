// NCHW fp32 -> nChw16c bf16. Each (image, block of 16 channels) is a 16 x hw matrix read row by row; 16 columns at a
// time are transposed in registers (16 rows of 16 floats -> 16 columns) and each column, the 16 channels of one
// pixel, is rounded to bf16 and stored as the 32 contiguous bytes the layout wants. The compiler builds this file
// without -march, so the kernel carries its own target attribute and runs only where supported() said yes. The
// pooled scatter works the other way round: one register per pooled pixel's 16 channels, stored lane by lane.
#include "engine/cpu/bf16_blocked.h"

#include <cstring>
#include <vector>

#include "engine/cpu/avx512.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/scratch.h"

namespace cw::bf16_blocked {

namespace {

#define CW_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// One (image, channel block): x points at its first channel's row, out at its [hw][16] output. Gated: each value of
// x gated by the same place of y (relu_gated). Summed: `sums` (16 floats) gets each channel's sum of the (gated)
// values, added in pixel order.
template <bool Gated, bool Summed>
CW_BF16_TARGET void convert_block(const float* x, const float* y, uint16_t* out, int64_t hw, float* sums) {
    __m512 rows[16];
    __m512 total = _mm512_setzero_ps();
    for (int64_t p = 0; p < hw; p += 16) {
        const int64_t width = hw - p < 16 ? hw - p : 16;
        const __mmask16 mask = avx512::first_lanes(width);
        for (int c = 0; c < 16; ++c) {
            rows[c] = _mm512_maskz_loadu_ps(mask, x + c * hw + p);
            if constexpr (Gated) rows[c] = avx512::relu_gated(rows[c], _mm512_maskz_loadu_ps(mask, y + c * hw + p));
        }
        avx512::transpose16(rows);
        for (int64_t j = 0; j < width; ++j) {
            avx512::store_bf16(out + (p + j) * 16, rows[j]);
            if constexpr (Summed) total = _mm512_add_ps(total, rows[j]);
        }
    }
    if constexpr (Summed) _mm512_storeu_ps(sums, total);
}

// One (image, channel block) of pooled_relu_gated_scatter: gy, y and argmax at the block's first channel's pooled
// plane, out at its [h][w][16] output (zeroed here), sums its 16 channels' sums. 16 pooled pixels at a time are
// transposed so that one register holds a pooled pixel's 16 channels; its values are rounded together and stored
// one 16-bit lane at a time at each channel's own place.
CW_BF16_TARGET void scatter_block(const float* gy, const float* y, const int32_t* argmax, uint16_t* out, int64_t h,
                                  int64_t w, float* sums) {
    const int64_t pw = w / 2, pooled = (h / 2) * pw;
    std::memset(out, 0, sizeof(uint16_t) * size_t(h * w * 16));
    const __m512 zero = _mm512_setzero_ps();
    // Row by row of the pooled plane, so the sums can follow pixel order: a pass over the windows' places in the
    // upper input row, then one over those in the lower.
    __m512 total = zero;
    alignas(64) int32_t places[16];
    alignas(64) uint16_t rounded[16];
    thread_local std::vector<float> row_values, row_places;  // a pooled row, a pixel's 16 channels together
    float* values = grown(row_values, pw * 16);
    float* at = grown(row_places, pw * 16);  // int32 bits
    for (int64_t row = 0; row < h / 2; ++row) {
        const int64_t first = row * pw;
        for (int64_t q = 0; q < pw; q += 16) {
            const int64_t width = pw - q < 16 ? pw - q : 16;
            const __mmask16 mask = avx512::first_lanes(width);
            __m512 g[16], a[16];
            for (int ch = 0; ch < 16; ++ch) {
                const int64_t from = ch * pooled + first + q;
                g[ch] = avx512::relu_gated(_mm512_maskz_loadu_ps(mask, gy + from),
                                           _mm512_maskz_loadu_ps(mask, y + from));
                a[ch] = _mm512_castsi512_ps(_mm512_maskz_loadu_epi32(mask, argmax + from));
            }
            avx512::transpose16(g);
            avx512::transpose16(a);
            for (int64_t j = 0; j < width; ++j) {
                _mm512_storeu_ps(values + (q + j) * 16, _mm512_add_ps(g[j], zero));  // as the scatter's 0 + value
                _mm512_storeu_ps(at + (q + j) * 16, a[j]);
            }
        }
        const __m512i upper_end = _mm512_set1_epi32(static_cast<int32_t>((2 * row + 1) * w));
        for (int lower = 0; lower < 2; ++lower)
            for (int64_t j = 0; j < pw; ++j) {
                const __m512i place = _mm512_loadu_si512(at + j * 16);
                const __m512 value = _mm512_loadu_ps(values + j * 16);
                const __mmask16 in_row = lower ? _mm512_cmpge_epi32_mask(place, upper_end)
                                               : _mm512_cmplt_epi32_mask(place, upper_end);
                total = _mm512_mask_add_ps(total, in_row, total, value);
                if (lower) continue;  // stored once, in the first pass
                _mm512_store_si512(reinterpret_cast<__m512i*>(places), place);
                _mm256_store_si256(reinterpret_cast<__m256i*>(rounded), (__m256i)_mm512_cvtneps_pbh(value));
                for (int ch = 0; ch < 16; ++ch) out[int64_t(places[ch]) * 16 + ch] = rounded[ch];
            }
    }
    _mm512_storeu_ps(sums, total);
}

// Room for each image's 16-channel block sums, [n][c], kept between calls: the gradient conversions run at every
// backward step.
float* per_image_sums(int64_t n, int64_t c) {
    thread_local std::vector<float> scratch;
    return grown(scratch, n * c);
}

// Each channel's per-image sums added over the images in order, in double: the same bits on any thread count.
void add_images(const float* per_image, float* channel_sums, int64_t n, int64_t c) {
    for (int64_t ch = 0; ch < c; ++ch) {
        double s = 0;
        for (int64_t i = 0; i < n; ++i) s += per_image[i * c + ch];
        channel_sums[ch] = static_cast<float>(s);
    }
}

}  // namespace

bool supported(int64_t channels) {
    static const bool cpu = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
    return cpu && channels > 0 && channels % 16 == 0;
}

void from_nchw(const float* x, uint16_t* y, int64_t n, int64_t c, int64_t hw) {
    const int64_t blocks = c / 16;
#pragma omp parallel for collapse(2) schedule(static) if (n * c * hw > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
        for (int64_t b = 0; b < blocks; ++b)
            convert_block<false, false>(x + (i * c + b * 16) * hw, nullptr, y + (i * blocks + b) * hw * 16, hw,
                                        nullptr);
}

void pooled_relu_gated_scatter(const float* gy, const float* y, const int32_t* argmax, uint16_t* out, int64_t n,
                               int64_t c, int64_t h, int64_t w, float* channel_sums) {
    const int64_t blocks = c / 16, pooled = (h / 2) * (w / 2);
    float* per_image = per_image_sums(n, c);
#pragma omp parallel for collapse(2) schedule(static) if (n * c * h * w > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t at = (i * c + b * 16) * pooled;
            scatter_block(gy + at, y + at, argmax + at, out + (i * blocks + b) * h * w * 16, h, w,
                          per_image + i * c + b * 16);
        }
    if (channel_sums) add_images(per_image, channel_sums, n, c);
}

void relu_gated_from_nchw(const float* gy, const float* y, uint16_t* out, int64_t n, int64_t c, int64_t hw,
                          float* channel_sums) {
    const int64_t blocks = c / 16;
    float* per_image = per_image_sums(n, c);
#pragma omp parallel for collapse(2) schedule(static) if (n * c * hw > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t at = (i * c + b * 16) * hw;
            uint16_t* to = out + (i * blocks + b) * hw * 16;
            float* sums = per_image + i * c + b * 16;
            if (y) convert_block<true, true>(gy + at, y + at, to, hw, sums);
            else convert_block<false, true>(gy + at, nullptr, to, hw, sums);
        }
    if (channel_sums) add_images(per_image, channel_sums, n, c);
}

}  // namespace cw::bf16_blocked
