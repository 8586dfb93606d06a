// Grow-only float scratch buffers for CPU kernels: kept per thread between calls, so a hot loop never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cw {

// The buffer's storage, grown to at least `floats` (contents unspecified).
inline float* grown(std::vector<float>& buffer, int64_t floats) {
    if (static_cast<int64_t>(buffer.size()) < floats) buffer.resize(static_cast<size_t>(floats));
    return buffer.data();
}

}  // namespace cw
