#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace cw {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& s);
std::string shape_str(const Shape& s);             // "[128, 3, 32, 32]"
int normalize_dim(int dim, int ndim, const char* op);  // negative dims count from the end; throws if out of range

}  // namespace cw
