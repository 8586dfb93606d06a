// NCHW fp32 -> nChw16c bf16. Each (image, block of 16 channels) is a 16 x hw matrix read row by row; 16 columns at a
// time are transposed in registers (16 rows of 16 floats -> 16 columns) and each column, the 16 channels of one
// pixel, is rounded to bf16 and stored as the 32 contiguous bytes the layout wants. The compiler builds this file
// without -march, so the kernel carries its own target attribute and runs only where supported() said yes.
#include "engine/cpu/bf16_blocked.h"

#include "engine/cpu/avx512.h"
#include "engine/cpu/cpu_backend.h"

namespace cw::bf16_blocked {

namespace {

#define CW_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// rows[i] holds channel i at 16 consecutive pixels; afterwards rows[j] holds pixel j's 16 channels.
CW_BF16_TARGET inline void transpose16(__m512 rows[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; ++i) {  // within 128-bit lanes: pairs of rows interleaved
        t[2 * i] = _mm512_unpacklo_ps(rows[2 * i], rows[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(rows[2 * i], rows[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {  // lane k of rows[4i + m]: rows 4i..4i+3 at pixel 4k + m
        rows[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        rows[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        rows[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        rows[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int m = 0; m < 4; ++m) {  // gather lane k of the four row groups: pixel 4k + m
        const __m512 a = _mm512_shuffle_f32x4(rows[m], rows[4 + m], 0x88);
        const __m512 b = _mm512_shuffle_f32x4(rows[m], rows[4 + m], 0xDD);
        const __m512 c = _mm512_shuffle_f32x4(rows[8 + m], rows[12 + m], 0x88);
        const __m512 d = _mm512_shuffle_f32x4(rows[8 + m], rows[12 + m], 0xDD);
        t[m] = _mm512_shuffle_f32x4(a, c, 0x88);       // pixel m
        t[4 + m] = _mm512_shuffle_f32x4(b, d, 0x88);   // pixel 4 + m
        t[8 + m] = _mm512_shuffle_f32x4(a, c, 0xDD);   // pixel 8 + m
        t[12 + m] = _mm512_shuffle_f32x4(b, d, 0xDD);  // pixel 12 + m
    }
    for (int j = 0; j < 16; ++j) rows[j] = t[j];
}

// One (image, channel block): x points at its first channel's row, y at its [hw][16] output.
CW_BF16_TARGET void convert_block(const float* x, uint16_t* y, int64_t hw) {
    __m512 rows[16];
    for (int64_t p = 0; p < hw; p += 16) {
        const int64_t width = hw - p < 16 ? hw - p : 16;
        const __mmask16 mask = avx512::first_lanes(width);
        for (int c = 0; c < 16; ++c) rows[c] = _mm512_maskz_loadu_ps(mask, x + c * hw + p);
        transpose16(rows);
        for (int64_t j = 0; j < width; ++j)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + (p + j) * 16), (__m256i)_mm512_cvtneps_pbh(rows[j]));
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
            convert_block(x + (i * c + b * 16) * hw, y + (i * blocks + b) * hw * 16, hw);
}

}  // namespace cw::bf16_blocked
