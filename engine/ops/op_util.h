#pragma once
// Shared checks and helpers for the op implementations.
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/ops.h"

namespace cw::detail {

inline Backend& kernels(const Tensor& t) { return backend(t.device()); }

// Every input defined, float32 (unless listed as int), and on one device.
void check_inputs(const char* op, std::initializer_list<const Tensor*> floats,
                  std::initializer_list<const Tensor*> ints = {});
void check_rank(const char* op, const Tensor& t, int rank, const char* what);

// Broadcast of a and b (see ops.h for the rule); dims are coalesced so kernels see as few as possible.
BroadcastIndex broadcast_index(const char* op, const Shape& a, const Shape& b, Shape& out);
// Index that sums an `out`-shaped tensor down to `target` (target broadcasts to out).
BroadcastIndex reduce_index(const Shape& target, const Shape& out);
// x summed down to `target` shape (x itself when the shapes already match).
Tensor sum_to_shape(const Tensor& x, const Shape& target);

AxisView axis_view(const Shape& s, int dim);

}  // namespace cw::detail
