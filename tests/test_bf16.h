#pragma once
// bf16 rounding written independently of the engine, for the tests of its bf16 paths: round to nearest, ties to
// even, on the bit pattern (finite values: what VCVTNEPS2BF16 and oneDNN's f32 -> bf16 reorder do with them).
#include <cstdint>
#include <cstring>
#include <vector>

namespace cw_test {

inline float bf16_rounded(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
    std::memcpy(&x, &bits, 4);
    return x;
}

inline std::vector<float> bf16_rounded(std::vector<float> v) {
    for (float& x : v) x = bf16_rounded(x);
    return v;
}

}  // namespace cw_test
