// Matrix multiply and the fully connected layer (OpenBLAS / cuBLAS GEMM through the backend).
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

Tensor matmul(const Tensor& a, const Tensor& b) {
    check_inputs("matmul", {&a, &b});
    check_rank("matmul", a, 2, "a");
    check_rank("matmul", b, 2, "b");
    if (a.size(1) != b.size(0))
        throw ShapeError("matmul: inner dims differ: " + shape_str(a.shape()) + " x " + shape_str(b.shape()));
    const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
    Tensor y = Tensor::empty({m, n}, DType::F32, a.device());
    kernels(a).gemm(false, false, m, n, k, 1.f, a.f32(), k, b.f32(), n, 0.f, y.f32(), n);
    record(y, "matmul", {a, b}, [a, b, m, k, n](const Tensor& gy, GradSink& sink) {
        if (sink.needs(0)) {  // ga = gy b^T
            Tensor ga = Tensor::empty(a.shape(), DType::F32, gy.device());
            kernels(gy).gemm(false, true, m, k, n, 1.f, gy.f32(), n, b.f32(), n, 0.f, ga.f32(), k);
            sink.add(0, std::move(ga));
        }
        if (sink.needs(1)) {  // gb = a^T gy
            Tensor gb = Tensor::empty(b.shape(), DType::F32, gy.device());
            kernels(gy).gemm(true, false, k, n, m, 1.f, a.f32(), k, gy.f32(), n, 0.f, gb.f32(), n);
            sink.add(1, std::move(gb));
        }
    });
    return y;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    check_inputs("linear", {&x, &weight});
    check_rank("linear", x, 2, "input");
    check_rank("linear", weight, 2, "weight");
    const int64_t n = x.size(0), in = x.size(1), out = weight.size(0);
    if (weight.size(1) != in)
        throw ShapeError("linear: input " + shape_str(x.shape()) + " does not match weight " +
                         shape_str(weight.shape()) + " (expected [out, " + std::to_string(in) + "])");
    if (bias.defined()) {
        check_inputs("linear", {&x, &bias});
        if (bias.shape() != Shape{out})
            throw ShapeError("linear: bias " + shape_str(bias.shape()) + " must be [" + std::to_string(out) + "]");
    }
    Tensor y = Tensor::empty({n, out}, DType::F32, x.device());
    kernels(x).gemm(false, true, n, out, in, 1.f, x.f32(), in, weight.f32(), in, 0.f, y.f32(), out);
    if (bias.defined() && y.numel()) kernels(x).add_channel_bias(y.f32(), bias.f32(), AxisView{n, out, 1});
    record(y, "linear", {x, weight, bias}, [x, weight, n, in, out](const Tensor& gy, GradSink& sink) {
        if (sink.needs(0)) {  // gx = gy W
            Tensor gx = Tensor::empty(x.shape(), DType::F32, gy.device());
            kernels(gy).gemm(false, false, n, in, out, 1.f, gy.f32(), out, weight.f32(), in, 0.f, gx.f32(), in);
            sink.add(0, std::move(gx));
        }
        if (sink.needs(1)) {  // gW = gy^T x
            Tensor gw = Tensor::empty(weight.shape(), DType::F32, gy.device());
            kernels(gy).gemm(true, false, out, in, n, 1.f, gy.f32(), out, x.f32(), in, 0.f, gw.f32(), in);
            sink.add(1, std::move(gw));
        }
        if (sink.needs(2)) {
            Tensor gb = Tensor::empty({out}, DType::F32, gy.device());
            kernels(gy).channel_sum(gy.f32(), gb.f32(), AxisView{n, out, 1}, false);
            sink.add(2, std::move(gb));
        }
    });
    return y;
}

}  // namespace cw
