#pragma once
// Shared checks and helpers for the op implementations.
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/layout_copy.h"
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

// write(out) fills y's storage; a layout copy the backend writes beside it for the next op (engine/layout_copy.h) is
// asked for around the call and kept on the storage.
template <class Write>
void write_with_layout_copy(Tensor& y, Write write) {
    float* out = y.f32();
    layout_copy::Request request(out);
    write(out);
    y.impl().storage->layout_copy = request.take();
}

}  // namespace cw::detail
