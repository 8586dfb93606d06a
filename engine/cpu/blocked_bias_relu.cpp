// nChw16c fp32 -> NCHW fp32 with bias and relu. Each (image, block of 16 channels) is read 16 pixels at a time: a
// pixel's 16 channels are one register, so the bias is one vector add and relu one masked move, before a transpose
// in registers turns the 16 pixel vectors into 16 channel rows stored where NCHW wants them.
#include "engine/cpu/blocked_bias_relu.h"

#include "engine/cpu/avx512.h"
#include "engine/cpu/cpu_backend.h"

namespace cw::blocked_bias_relu {

namespace {

#define CW_AVX512F_TARGET __attribute__((target("avx512f")))

// One (image, channel block): in at its [hw][16] values, out at its first channel's row, bias its 16 channels'.
CW_AVX512F_TARGET void convert_block(const float* in, __m512 bias, float* out, int64_t hw) {
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
        }
        avx512::transpose16(rows);
        const __mmask16 mask = avx512::first_lanes(width);
        for (int c = 0; c < 16; ++c) _mm512_mask_storeu_ps(out + c * hw + p, mask, rows[c]);
    }
}

CW_AVX512F_TARGET void convert(const float* blocked, const float* bias, float* y, int64_t n, int64_t c, int64_t hw) {
    const int64_t blocks = c / 16;
#pragma omp parallel for collapse(2) schedule(static) if (n * c * hw > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
        for (int64_t b = 0; b < blocks; ++b)
            convert_block(blocked + (i * blocks + b) * hw * 16,
                          bias ? _mm512_loadu_ps(bias + b * 16) : _mm512_setzero_ps(), y + (i * c + b * 16) * hw, hw);
}

}  // namespace

bool supported(int64_t channels) {
    static const bool cpu = __builtin_cpu_supports("avx512f");
    return cpu && channels > 0 && channels % 16 == 0;
}

void to_nchw(const float* blocked, const float* bias, float* y, int64_t n, int64_t c, int64_t hw) {
    convert(blocked, bias, y, n, c, hw);
}

}  // namespace cw::blocked_bias_relu
