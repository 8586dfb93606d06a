// The 2x2 max-pool row. The portable loop reads its inputs at stride 2, which the compiler's vectoriser handles
// poorly (about 7% of the small CNN's adversarial-training step went here); the AVX-512 kernel loads 32 inputs of
// each row, splits them into even and odd columns with one permute each, and applies the same three ordered
// comparisons to sixteen outputs at once.
#include "engine/cpu/maxpool2x2.h"

#include "engine/cpu/avx512.h"
#include "engine/cpu/vector_clones.h"

namespace cw::maxpool2x2 {

namespace {

#define CW_AVX512_TARGET __attribute__((target("avx512f")))

CW_AVX512_TARGET void row_avx512(const float* r0, const float* r1, float* y, int32_t* argmax, int64_t ow_n,
                                 int32_t r0_at, int32_t r1_at) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (int64_t ow = 0; ow < ow_n; ow += 16) {
        const int64_t width = ow_n - ow < 16 ? ow_n - ow : 16;
        // Input columns 2ow .. 2ow + 2·width - 1 of each row, as two halves of 16.
        const int64_t in = 2 * width;
        const __mmask16 lo = avx512::first_lanes(in), hi = avx512::first_lanes(in - 16);
        const __m512 a0 = _mm512_maskz_loadu_ps(lo, r0 + 2 * ow), a1 = _mm512_maskz_loadu_ps(hi, r0 + 2 * ow + 16);
        const __m512 b0 = _mm512_maskz_loadu_ps(lo, r1 + 2 * ow), b1 = _mm512_maskz_loadu_ps(hi, r1 + 2 * ow + 16);
        const __m512 cand[4] = {_mm512_permutex2var_ps(a0, even, a1), _mm512_permutex2var_ps(a0, odd, a1),
                                _mm512_permutex2var_ps(b0, even, b1), _mm512_permutex2var_ps(b0, odd, b1)};
        const __m512i col = _mm512_add_epi32(even, _mm512_set1_epi32(static_cast<int32_t>(2 * ow)));
        const __m512i cand_at[4] = {_mm512_add_epi32(col, _mm512_set1_epi32(r0_at)),
                                    _mm512_add_epi32(col, _mm512_set1_epi32(r0_at + 1)),
                                    _mm512_add_epi32(col, _mm512_set1_epi32(r1_at)),
                                    _mm512_add_epi32(col, _mm512_set1_epi32(r1_at + 1))};
        __m512 best = cand[0];
        __m512i at = cand_at[0];
        for (int j = 1; j < 4; ++j) {
            const __mmask16 take = _mm512_cmp_ps_mask(cand[j], best, _CMP_GT_OQ) |
                                   _mm512_cmp_ps_mask(cand[j], cand[j], _CMP_UNORD_Q);
            best = _mm512_mask_blend_ps(take, best, cand[j]);
            at = _mm512_mask_blend_epi32(take, at, cand_at[j]);
        }
        const __mmask16 out = avx512::first_lanes(width);
        _mm512_mask_storeu_ps(y + ow, out, best);
        _mm512_mask_storeu_epi32(argmax + ow, out, at);
    }
}

}  // namespace

CW_VECTOR_CLONES
void row_portable(const float* __restrict r0, const float* __restrict r1, float* __restrict y,
                  int32_t* __restrict argmax, int64_t ow_n, int32_t r0_at, int32_t r1_at) {
    for (int64_t ow = 0; ow < ow_n; ++ow) {
        float best = r0[2 * ow];
        int32_t at = r0_at + static_cast<int32_t>(2 * ow);
        const float cand[3] = {r0[2 * ow + 1], r1[2 * ow], r1[2 * ow + 1]};
        const int32_t cand_at[3] = {at + 1, r1_at + static_cast<int32_t>(2 * ow),
                                    r1_at + static_cast<int32_t>(2 * ow) + 1};
        for (int j = 0; j < 3; ++j) {
            const bool take = cand[j] > best || cand[j] != cand[j];
            best = take ? cand[j] : best;
            at = take ? cand_at[j] : at;
        }
        y[ow] = best;
        argmax[ow] = at;
    }
}

void row(const float* r0, const float* r1, float* y, int32_t* argmax, int64_t ow_n, int32_t r0_at, int32_t r1_at) {
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    if (avx512) return row_avx512(r0, r1, y, argmax, ow_n, r0_at, r1_at);
    row_portable(r0, r1, y, argmax, ow_n, r0_at, r1_at);
}

}  // namespace cw::maxpool2x2
