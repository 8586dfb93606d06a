// Shape ops: reshape/flatten (views sharing storage) and concatenation.
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

Tensor reshape(const Tensor& x, const Shape& shape) {
    if (!x.defined()) throw Error("reshape: undefined tensor");
    Shape out = shape;
    int infer = -1;
    int64_t known = 1;
    for (size_t d = 0; d < out.size(); ++d) {
        if (out[d] == -1) {
            if (infer >= 0) throw ShapeError("reshape: more than one -1 in " + shape_str(shape));
            infer = static_cast<int>(d);
        } else if (out[d] < 0) {
            throw ShapeError("reshape: negative dim in " + shape_str(shape));
        } else {
            known *= out[d];
        }
    }
    if (infer >= 0) {
        if (known == 0 || x.numel() % known)
            throw ShapeError("reshape: cannot reshape " + x.describe() + " into " + shape_str(shape));
        out[infer] = x.numel() / known;
    }
    if (shape_numel(out) != x.numel())
        throw ShapeError("reshape: " + x.describe() + " has " + std::to_string(x.numel()) +
                         " elements, target shape " + shape_str(shape) + " has " + std::to_string(shape_numel(out)));
    auto impl = std::make_shared<TensorImpl>();
    impl->shape = out;
    impl->dtype = x.dtype();
    impl->storage = x.impl().storage;
    Tensor y(impl);
    const Shape in_shape = x.shape();
    record(y, "reshape", {x}, [in_shape](const Tensor& gy, GradSink& sink) { sink.add(0, reshape(gy.detach(), in_shape)); });
    return y;
}

Tensor flatten(const Tensor& x) {
    if (x.ndim() < 1) throw ShapeError("flatten: needs at least a batch dim, got " + x.describe());
    return reshape(x, {x.size(0), -1});
}

Tensor concat(const std::vector<Tensor>& xs, int dim) {
    if (xs.empty()) throw ShapeError("concat: no tensors");
    for (const auto& t : xs) check_inputs("concat", {&xs[0], &t});
    const int d = normalize_dim(dim, xs[0].ndim(), "concat");
    Shape out = xs[0].shape();
    out[d] = 0;
    for (const auto& t : xs) {
        bool ok = t.ndim() == xs[0].ndim();
        for (int i = 0; ok && i < t.ndim(); ++i) ok = i == d || t.shape()[i] == xs[0].shape()[i];
        if (!ok)
            throw ShapeError("concat: shapes " + shape_str(xs[0].shape()) + " and " + shape_str(t.shape()) +
                             " differ outside dim " + std::to_string(d));
        out[d] += t.shape()[d];
    }
    Tensor y = Tensor::empty(out, DType::F32, xs[0].device());
    const AxisView wide = axis_view(out, d);
    int64_t offset = 0;
    std::vector<int64_t> offsets;
    for (const auto& t : xs) {
        const int64_t block = t.shape()[d] * wide.inner;
        offsets.push_back(offset);
        if (t.numel()) kernels(t).copy_block(t.f32(), y.f32(), wide.outer, block, wide.dim * wide.inner, offset, true);
        offset += block;
    }
    record(y, "concat", xs, [xs, offsets, wide, d](const Tensor& gy, GradSink& sink) {
        for (size_t i = 0; i < xs.size(); ++i) {
            if (!sink.needs(i)) continue;
            Tensor g = Tensor::empty(xs[i].shape(), DType::F32, gy.device());
            const int64_t block = xs[i].shape()[d] * wide.inner;
            if (g.numel())
                kernels(gy).copy_block(gy.f32(), g.f32(), wide.outer, block, wide.dim * wide.inner, offsets[i], false);
            sink.add(i, std::move(g));
        }
    });
    return y;
}

}  // namespace cw
