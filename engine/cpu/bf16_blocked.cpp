// NCHW fp32 -> nChw16c bf16. Each (image, block of 16 channels) is a 16 x hw matrix read row by row; 16 columns at a
// time are transposed in registers (16 rows of 16 floats -> 16 columns) and each column, the 16 channels of one
// pixel, is rounded to bf16 and stored as the 32 contiguous bytes the layout wants. The compiler builds this file
// without -march, so the kernel carries its own target attribute and runs only where supported() said yes.
#include "engine/cpu/bf16_blocked.h"

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
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (p + j) * 16), (__m256i)_mm512_cvtneps_pbh(rows[j]));
            if constexpr (Summed) total = _mm512_add_ps(total, rows[j]);
        }
    }
    if constexpr (Summed) _mm512_storeu_ps(sums, total);
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
            convert_block<false, false>(x + (i * c + b * 16) * hw, nullptr, y + (i * blocks + b) * hw * 16, hw, nullptr);
}

void relu_gated_from_nchw(const float* gy, const float* y, uint16_t* out, int64_t n, int64_t c, int64_t hw,
                          float* channel_sums) {
    const int64_t blocks = c / 16;
    thread_local std::vector<float> scratch;  // kept between calls: this runs at every backward step
    float* per_image = grown(scratch, n * c);
#pragma omp parallel for collapse(2) schedule(static) if (n * c * hw > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
        for (int64_t b = 0; b < blocks; ++b) {
            const int64_t at = (i * c + b * 16) * hw;
            if (y)
                convert_block<true, true>(gy + at, y + at, out + (i * blocks + b) * hw * 16, hw, per_image + i * c + b * 16);
            else
                convert_block<false, true>(gy + at, nullptr, out + (i * blocks + b) * hw * 16, hw, per_image + i * c + b * 16);
        }
    if (!channel_sums) return;
    for (int64_t ch = 0; ch < c; ++ch) {  // the images in order, in double: the same bits on any thread count
        double s = 0;
        for (int64_t i = 0; i < n; ++i) s += per_image[i * c + ch];
        channel_sums[ch] = static_cast<float>(s);
    }
}

}  // namespace cw::bf16_blocked
