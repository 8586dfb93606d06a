#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace cw {

// float32 for every differentiable tensor; int32 for labels, indices and argmax results.
enum class DType { F32, I32 };

inline size_t dtype_size(DType) { return 4; }
inline const char* dtype_name(DType d) { return d == DType::F32 ? "float32" : "int32"; }

}  // namespace cw
