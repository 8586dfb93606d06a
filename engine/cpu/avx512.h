// What the hand-written AVX-512 kernels share (bf16_blocked.cpp, maxpool2x2.cpp, ...): the intrinsics, the mask of
// a loop's last, partial step, a 16 x 16 transpose and relu's rule. The build assumes no more than x86-64, so each kernel carries its own target
// attribute and runs only where the CPU says yes.
#pragma once

#include <cstdint>

// GCC 12 warns inside its own AVX-512 headers (their _mm512_undefined_* self-initialise; GCC bug 105593, fixed in
// 13) wherever the intrinsics inline, so the warning is off for the rest of the including file; nothing reads an
// undefined value.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace cw::avx512 {

// The first n of 16 lanes (n clamped to 0..16).
inline __mmask16 first_lanes(int64_t n) {
    return static_cast<__mmask16>(n >= 16 ? 0xFFFF : n <= 0 ? 0 : (1u << n) - 1);
}

// A 16 x 16 transpose in registers: rows[i] element j becomes rows[j] element i (channel i at 16 consecutive pixels
// becomes pixel j's 16 channels, and back).
__attribute__((target("avx512f"))) inline void transpose16(__m512 rows[16]) {
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

// relu's rule, written once for the kernels that fuse it: where v > 0 or v is NaN, keep (NaN passes, as the relu op
// passes it), else 0. relu(v) applies it to v; relu_gated(gy, y) to gy by relu's output y, which is relu's gradient
// read off its output (relu(z) is 0 exactly where z <= 0).
__attribute__((target("avx512f"))) inline __m512 relu_gated(__m512 gy, __m512 y) {
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_NLE_UQ), gy);
}
__attribute__((target("avx512f"))) inline __m512 relu(__m512 v) { return relu_gated(v, v); }

// 16 floats rounded to bf16 (to nearest, ties to even: VCVTNEPS2BF16, the instruction oneDNN's reorders use) and
// stored at `to`: a pixel's 16 channels in oneDNN's nChw16c bf16 layout. Only on CPUs with AVX512_BF16.
__attribute__((target("avx512f,avx512bf16"))) inline void store_bf16(uint16_t* to, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), (__m256i)_mm512_cvtneps_pbh(v));
}

}  // namespace cw::avx512
