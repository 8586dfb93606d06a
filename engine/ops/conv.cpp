// 2-d convolution (NCHW input, OIHW weights). The backward computes only the gradients asked for: an attack
// step (InputGradOnly) never runs the weight-gradient GEMM.
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding) {
    check_inputs("conv2d", {&x, &weight});
    check_rank("conv2d", x, 4, "input");
    check_rank("conv2d", weight, 4, "weight");
    if (stride < 1 || padding < 0)
        throw ShapeError("conv2d: stride must be >= 1 and padding >= 0, got stride " + std::to_string(stride) +
                         ", padding " + std::to_string(padding));
    ConvGeometry g{x.size(0), x.size(1), x.size(2), x.size(3), weight.size(0), weight.size(2), weight.size(3),
                   stride, padding};
    if (weight.size(1) != g.c)
        throw ShapeError("conv2d: input " + shape_str(x.shape()) + " has " + std::to_string(g.c) +
                         " channels but weight " + shape_str(weight.shape()) + " expects " +
                         std::to_string(weight.size(1)));
    if (g.h + 2 * padding < g.r || g.w + 2 * padding < g.s)
        throw ShapeError("conv2d: kernel " + shape_str(weight.shape()) + " is larger than the padded input " +
                         shape_str(x.shape()));
    if (bias.defined()) {
        check_inputs("conv2d", {&x, &bias});
        if (bias.shape() != Shape{g.k})
            throw ShapeError("conv2d: bias " + shape_str(bias.shape()) + " must be [" + std::to_string(g.k) + "]");
    }
    Tensor y = Tensor::empty({g.n, g.k, g.out_h(), g.out_w()}, DType::F32, x.device());
    const AxisView channels{g.n, g.k, g.out_h() * g.out_w()};
    if (y.numel()) {
        kernels(x).conv2d_forward(x.f32(), weight.f32(), y.f32(), g);
        if (bias.defined()) kernels(x).add_channel_bias(y.f32(), bias.f32(), channels);
    }
    record(y, "conv2d", {x, weight, bias}, [x, weight, g, channels](const Tensor& gy, GradSink& sink) {
        Tensor gx = sink.needs(0) ? Tensor::empty(x.shape(), DType::F32, gy.device()) : Tensor();
        Tensor gw = sink.needs(1) ? Tensor::empty(weight.shape(), DType::F32, gy.device()) : Tensor();
        if (gx.defined() || gw.defined())
            kernels(gy).conv2d_backward(x.f32(), weight.f32(), gy.f32(), gx.defined() ? gx.f32() : nullptr,
                                        gw.defined() ? gw.f32() : nullptr, g);
        if (gx.defined()) sink.add(0, std::move(gx));
        if (gw.defined()) sink.add(1, std::move(gw));
        if (sink.needs(2)) {
            Tensor gb = Tensor::empty({g.k}, DType::F32, gy.device());
            kernels(gy).channel_sum(gy.f32(), gb.f32(), channels, false);
            sink.add(2, std::move(gb));
        }
    });
    return y;
}

}  // namespace cw
