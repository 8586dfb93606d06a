#include "engine/shape.h"

#include "engine/error.h"

namespace cw {

int64_t shape_numel(const Shape& s) {
    int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

std::string shape_str(const Shape& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(s[i]);
    }
    return out + "]";
}

int normalize_dim(int dim, int ndim, const char* op) {
    const int d = dim < 0 ? dim + ndim : dim;
    if (d < 0 || d >= ndim)
        throw ShapeError(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for a " +
                         std::to_string(ndim) + "-d tensor");
    return d;
}

}  // namespace cw
