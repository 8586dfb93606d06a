#include "engine/ops/op_util.h"

namespace cw::detail {

void check_inputs(const char* op, std::initializer_list<const Tensor*> floats, std::initializer_list<const Tensor*> ints) {
    const Tensor* first = nullptr;
    auto check_device = [&](const Tensor* t) {
        if (!first) {
            first = t;
        } else if (t->device() != first->device()) {
            throw DeviceError(std::string(op) + ": inputs are on different devices (" + first->describe() + " and " +
                              t->describe() + "); move them with .to(device)");
        }
    };
    for (const Tensor* t : floats) {
        if (!t->defined()) throw Error(std::string(op) + ": an input tensor is undefined");
        if (t->dtype() != DType::F32) throw Error(std::string(op) + ": expected a float32 input, got " + t->describe());
        check_device(t);
    }
    for (const Tensor* t : ints) {
        if (!t->defined()) throw Error(std::string(op) + ": an index/label tensor is undefined");
        if (t->dtype() != DType::I32) throw Error(std::string(op) + ": expected int32 labels/indices, got " + t->describe());
        check_device(t);
    }
}

void check_rank(const char* op, const Tensor& t, int rank, const char* what) {
    if (t.ndim() != rank)
        throw ShapeError(std::string(op) + ": " + what + " must be " + std::to_string(rank) + "-d, got shape " +
                         shape_str(t.shape()));
}

namespace {
void contiguous_strides(const Shape& s, int64_t* strides) {
    int64_t st = 1;
    for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
        strides[d] = s[d] == 1 ? 0 : st;
        st *= s[d];
    }
}

// Drops size-1 dims and merges neighbours that are contiguous in both operands.
BroadcastIndex coalesce(const Shape& out, const int64_t* as, const int64_t* bs) {
    BroadcastIndex bi;
    for (size_t d = 0; d < out.size(); ++d) {
        if (out[d] == 1) continue;
        if (bi.ndim > 0) {
            const int last = bi.ndim - 1;
            if (bi.a_stride[last] == as[d] * out[d] && bi.b_stride[last] == bs[d] * out[d]) {
                bi.out_shape[last] *= out[d];
                bi.a_stride[last] = as[d];
                bi.b_stride[last] = bs[d];
                continue;
            }
        }
        if (bi.ndim == BroadcastIndex::kMaxDims) throw ShapeError("broadcast: more than 8 dims");
        bi.out_shape[bi.ndim] = out[d];
        bi.a_stride[bi.ndim] = as[d];
        bi.b_stride[bi.ndim] = bs[d];
        ++bi.ndim;
    }
    return bi;
}
}  // namespace

BroadcastIndex broadcast_index(const char* op, const Shape& a, const Shape& b, Shape& out) {
    const bool a_scalar = a.empty(), b_scalar = b.empty();
    if (!a_scalar && !b_scalar && a.size() != b.size())
        throw ShapeError(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                         " have different ranks (reshape one explicitly, e.g. per-channel [1,C,1,1])");
    const Shape& ref = a_scalar ? b : a;
    out = ref;
    std::vector<int64_t> as(ref.size(), 0), bs(ref.size(), 0);
    Shape a_full = a_scalar ? Shape(ref.size(), 1) : a;
    Shape b_full = b_scalar ? Shape(ref.size(), 1) : b;
    for (size_t d = 0; d < ref.size(); ++d) {
        if (a_full[d] == b_full[d]) out[d] = a_full[d];
        else if (a_full[d] == 1) out[d] = b_full[d];
        else if (b_full[d] == 1) out[d] = a_full[d];
        else
            throw ShapeError(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                             " do not broadcast (dim " + std::to_string(d) + ": " + std::to_string(a_full[d]) +
                             " vs " + std::to_string(b_full[d]) + ")");
    }
    contiguous_strides(a_full, as.data());
    contiguous_strides(b_full, bs.data());
    return coalesce(out, as.data(), bs.data());
}

BroadcastIndex reduce_index(const Shape& target, const Shape& out) {
    // Only a 0-d target or one of equal rank broadcasts (ops.h); anything else would index past the target.
    bool fits = target.empty() || target.size() == out.size();
    for (size_t d = 0; fits && !target.empty() && d < out.size(); ++d) fits = target[d] == 1 || target[d] == out[d];
    if (!fits) throw ShapeError("sum_to: " + shape_str(out) + " cannot be summed down to " + shape_str(target));
    Shape t_full = target.empty() ? Shape(out.size(), 1) : target;
    std::vector<int64_t> ts(out.size(), 0), zero(out.size(), 0);
    contiguous_strides(t_full, ts.data());
    return coalesce(out, ts.data(), zero.data());
}

Tensor sum_to_shape(const Tensor& x, const Shape& target) {
    if (x.shape() == target) return x;
    Tensor y = Tensor::empty(target, DType::F32, x.device());
    const BroadcastIndex bi = reduce_index(target, x.shape());
    kernels(x).sum_to(x.f32(), y.f32(), bi, y.numel());
    return y;
}

AxisView axis_view(const Shape& s, int dim) {
    AxisView v{1, s[dim], 1};
    for (int d = 0; d < dim; ++d) v.outer *= s[d];
    for (size_t d = dim + 1; d < s.size(); ++d) v.inner *= s[d];
    return v;
}

}  // namespace cw::detail
