// Reductions (sum, mean, max, top-k) and row indexing (gather, one-hot).
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

namespace {
Shape reduced_shape(const Shape& s, int dim, bool keepdim, int64_t kept = 1) {
    Shape out = s;
    if (keepdim || kept != 1) out[dim] = kept;
    else out.erase(out.begin() + dim);
    return out;
}
}  // namespace

Tensor sum(const Tensor& x) {
    check_inputs("sum", {&x});
    Tensor y = Tensor::empty({}, DType::F32, x.device());
    kernels(x).sum_all(x.f32(), y.f32(), x.numel());
    record(y, "sum", {x}, [x](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::empty(x.shape(), DType::F32, x.device());
        if (gx.numel()) kernels(x).broadcast_axis(gy.f32(), gx.f32(), AxisView{1, x.numel(), 1}, 1.f);
        sink.add(0, std::move(gx));
    });
    return y;
}

Tensor sum(const Tensor& x, int dim, bool keepdim) {
    check_inputs("sum", {&x});
    const int d = normalize_dim(dim, x.ndim(), "sum");
    const AxisView v = axis_view(x.shape(), d);
    Tensor y = Tensor::empty(reduced_shape(x.shape(), d, keepdim), DType::F32, x.device());
    if (y.numel()) kernels(x).sum_axis(x.f32(), y.f32(), v);
    record(y, "sum_dim", {x}, [x, v](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::empty(x.shape(), DType::F32, x.device());
        if (gx.numel()) kernels(x).broadcast_axis(gy.f32(), gx.f32(), v, 1.f);
        sink.add(0, std::move(gx));
    });
    return y;
}

Tensor mean(const Tensor& x) {
    if (x.numel() == 0) throw ShapeError("mean: empty tensor " + x.describe());
    return mul(sum(x), 1.f / static_cast<float>(x.numel()));
}

Tensor mean(const Tensor& x, int dim, bool keepdim) {
    const int d = normalize_dim(dim, x.ndim(), "mean");
    if (x.shape()[d] == 0) throw ShapeError("mean: reducing an empty dim of " + x.describe());
    return mul(sum(x, d, keepdim), 1.f / static_cast<float>(x.shape()[d]));
}

Tensor max(const Tensor& x, int dim, bool keepdim) {
    check_inputs("max", {&x});
    const int d = normalize_dim(dim, x.ndim(), "max");
    if (x.shape()[d] == 0) throw ShapeError("max: reducing an empty dim of " + x.describe());
    const AxisView v = axis_view(x.shape(), d);
    const Shape out = reduced_shape(x.shape(), d, keepdim);
    Tensor y = Tensor::empty(out, DType::F32, x.device());
    Tensor idx = Tensor::empty(out, DType::I32, x.device());
    if (y.numel()) kernels(x).max_axis(x.f32(), y.f32(), idx.i32(), v);
    record(y, "max_dim", {x}, [x, v, idx](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::zeros(x.shape(), DType::F32, x.device());
        if (gy.numel()) kernels(x).scatter_axis_add(gy.f32(), idx.i32(), gx.f32(), v, 1);
        sink.add(0, std::move(gx));
    });
    return y;
}

Tensor argmax(const Tensor& x, int dim) {
    check_inputs("argmax", {&x});
    const int d = normalize_dim(dim, x.ndim(), "argmax");
    if (x.shape()[d] == 0) throw ShapeError("argmax: reducing an empty dim of " + x.describe());
    Tensor idx = Tensor::empty(reduced_shape(x.shape(), d, false), DType::I32, x.device());
    if (idx.numel()) kernels(x).max_axis(x.f32(), nullptr, idx.i32(), axis_view(x.shape(), d));
    return idx;
}

TopK topk(const Tensor& x, int64_t k, int dim) {
    check_inputs("topk", {&x});
    const int d = normalize_dim(dim, x.ndim(), "topk");
    if (k < 1 || k > x.shape()[d])
        throw ShapeError("topk: k = " + std::to_string(k) + " must be in [1, " + std::to_string(x.shape()[d]) +
                         "] for " + x.describe());
    const AxisView v = axis_view(x.shape(), d);
    const Shape out = reduced_shape(x.shape(), d, true, k);
    TopK r{Tensor::empty(out, DType::F32, x.device()), Tensor::empty(out, DType::I32, x.device())};
    if (r.values.numel()) kernels(x).topk_axis(x.f32(), r.values.f32(), r.indices.i32(), v, k);
    Tensor idx = r.indices;
    record(r.values, "topk", {x}, [x, v, idx, k](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::zeros(x.shape(), DType::F32, x.device());
        if (gy.numel()) kernels(x).scatter_axis_add(gy.f32(), idx.i32(), gx.f32(), v, k);
        sink.add(0, std::move(gx));
    });
    return r;
}

namespace {
void check_row_indices(const char* op, const Tensor& index, int64_t cols) {
    if (!index.device().is_cpu()) return;  // device kernels guard their own reads
    const int32_t* p = index.i32();
    for (int64_t i = 0; i < index.numel(); ++i)
        if (p[i] < 0 || p[i] >= cols)
            throw ShapeError(std::string(op) + ": index " + std::to_string(p[i]) + " at position " +
                             std::to_string(i) + " is outside [0, " + std::to_string(cols) + ")");
}
}  // namespace

Tensor gather(const Tensor& x, const Tensor& index) {
    check_inputs("gather", {&x}, {&index});
    check_rank("gather", x, 2, "x");
    check_rank("gather", index, 1, "index");
    if (index.size(0) != x.size(0))
        throw ShapeError("gather: index " + shape_str(index.shape()) + " needs one entry per row of x " +
                         shape_str(x.shape()));
    check_row_indices("gather", index, x.size(1));
    Tensor y = Tensor::empty({x.size(0)}, DType::F32, x.device());
    if (y.numel()) kernels(x).gather_rows(x.f32(), index.i32(), y.f32(), x.size(0), x.size(1));
    record(y, "gather", {x}, [x, index](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::empty(x.shape(), DType::F32, x.device());
        if (gx.numel()) kernels(x).gather_rows_backward(gy.f32(), index.i32(), gx.f32(), x.size(0), x.size(1));
        sink.add(0, std::move(gx));
    });
    return y;
}

Tensor one_hot(const Tensor& labels, int64_t num_classes) {
    check_inputs("one_hot", {}, {&labels});
    check_rank("one_hot", labels, 1, "labels");
    check_row_indices("one_hot", labels, num_classes);
    Tensor y = Tensor::empty({labels.size(0), num_classes}, DType::F32, labels.device());
    if (y.numel()) kernels(labels).one_hot(labels.i32(), y.f32(), labels.size(0), num_classes);
    return y;
}

}  // namespace cw
