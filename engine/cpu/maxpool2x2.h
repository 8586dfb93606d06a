// One output row of the common 2x2 stride-2 unpadded max-pool: the general loop's choice rule (the first maximum
// wins ties, a NaN always takes over so NaN propagates), and the index of the chosen input in its plane.
#pragma once

#include <cstdint>

namespace cw::maxpool2x2 {

// r0, r1: the two input rows (2 * ow_n values each are read); r0_at, r1_at: their offsets in the plane.
// On CPUs with AVX-512 sixteen outputs at a time, else a loop the compiler vectorises; the same results bit for bit.
void row(const float* r0, const float* r1, float* y, int32_t* argmax, int64_t ow_n, int32_t r0_at, int32_t r1_at);

// The portable loop alone, for the test that holds the two to each other.
void row_portable(const float* r0, const float* r1, float* y, int32_t* argmax, int64_t ow_n, int32_t r0_at,
                  int32_t r1_at);

}  // namespace cw::maxpool2x2
