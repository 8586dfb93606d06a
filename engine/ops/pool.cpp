// Max, average and global average pooling.
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

namespace {
PoolGeometry pool_geometry(const char* op, const Tensor& x, int64_t kernel, int64_t stride, int64_t padding) {
    check_inputs(op, {&x});
    check_rank(op, x, 4, "input");
    if (stride < 0) stride = kernel;
    if (kernel < 1 || stride < 1 || padding < 0 || 2 * padding > kernel)
        throw ShapeError(std::string(op) + ": need kernel >= 1, stride >= 1, 0 <= padding <= kernel/2; got kernel " +
                         std::to_string(kernel) + ", stride " + std::to_string(stride) + ", padding " +
                         std::to_string(padding));
    PoolGeometry g{x.size(0), x.size(1), x.size(2), x.size(3), kernel, stride, padding};
    if (g.h + 2 * padding < kernel || g.w + 2 * padding < kernel)
        throw ShapeError(std::string(op) + ": kernel " + std::to_string(kernel) + " is larger than the input " +
                         shape_str(x.shape()));
    return g;
}
}  // namespace

Tensor max_pool2d(const Tensor& x, int64_t kernel, int64_t stride, int64_t padding) {
    const PoolGeometry g = pool_geometry("max_pool2d", x, kernel, stride, padding);
    const Shape out{g.n, g.c, g.out_h(), g.out_w()};
    Tensor y = Tensor::empty(out, DType::F32, x.device());
    Tensor argmax = Tensor::empty(out, DType::I32, x.device());
    if (y.numel()) kernels(x).maxpool2d_forward(x.f32(), y.f32(), argmax.i32(), g);
    const Shape in = x.shape();
    record(y, "max_pool2d", {x}, [in, argmax, g](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::empty(in, DType::F32, gy.device());
        if (gx.numel()) kernels(gy).maxpool2d_backward(gy.f32(), argmax.i32(), gx.f32(), g);
        sink.add(0, std::move(gx));
    });
    return y;
}

Tensor avg_pool2d(const Tensor& x, int64_t kernel, int64_t stride, int64_t padding) {
    const PoolGeometry g = pool_geometry("avg_pool2d", x, kernel, stride, padding);
    Tensor y = Tensor::empty({g.n, g.c, g.out_h(), g.out_w()}, DType::F32, x.device());
    if (y.numel()) kernels(x).avgpool2d_forward(x.f32(), y.f32(), g);
    const Shape in = x.shape();
    record(y, "avg_pool2d", {x}, [in, g](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::empty(in, DType::F32, gy.device());
        if (gx.numel()) kernels(gy).avgpool2d_backward(gy.f32(), gx.f32(), g);
        sink.add(0, std::move(gx));
    });
    return y;
}

Tensor global_avg_pool2d(const Tensor& x) {
    check_inputs("global_avg_pool2d", {&x});
    check_rank("global_avg_pool2d", x, 4, "input");
    const int64_t n = x.size(0), c = x.size(1), hw = x.size(2) * x.size(3);
    if (hw == 0) throw ShapeError("global_avg_pool2d: empty spatial size in " + x.describe());
    return mean(reshape(x, {n, c, hw}), 2);
}

}  // namespace cw
