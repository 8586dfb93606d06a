// What the hand-written AVX-512 kernels share (bf16_blocked.cpp, maxpool2x2.cpp): the intrinsics, and the mask of
// a loop's last, partial step. The build assumes no more than x86-64, so each kernel carries its own target
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

}  // namespace cw::avx512
