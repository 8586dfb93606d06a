// 2-d convolution (NCHW input, OIHW weights): alone, followed by relu as one op, and followed by relu and a 2x2
// max-pool as one op. The backward computes only the gradients asked for: an attack step (InputGradOnly) never runs
// the weight-gradient GEMM.
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

namespace {

// The geometry of op(x, weight, bias, stride, padding), or a ShapeError naming op and what does not fit.
ConvGeometry checked_geometry(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias,
                              int64_t stride, int64_t padding) {
    check_inputs(op, {&x, &weight});
    check_rank(op, x, 4, "input");
    check_rank(op, weight, 4, "weight");
    if (stride < 1 || padding < 0)
        throw ShapeError(std::string(op) + ": stride must be >= 1 and padding >= 0, got stride " +
                         std::to_string(stride) + ", padding " + std::to_string(padding));
    ConvGeometry g{x.size(0), x.size(1), x.size(2), x.size(3), weight.size(0), weight.size(2), weight.size(3),
                   stride, padding};
    if (weight.size(1) != g.c)
        throw ShapeError(std::string(op) + ": input " + shape_str(x.shape()) + " has " + std::to_string(g.c) +
                         " channels but weight " + shape_str(weight.shape()) + " expects " +
                         std::to_string(weight.size(1)));
    if (g.h + 2 * padding < g.r || g.w + 2 * padding < g.s)
        throw ShapeError(std::string(op) + ": kernel " + shape_str(weight.shape()) +
                         " is larger than the padded input " + shape_str(x.shape()));
    if (bias.defined()) {
        check_inputs(op, {&x, &bias});
        if (bias.shape() != Shape{g.k})
            throw ShapeError(std::string(op) + ": bias " + shape_str(bias.shape()) + " must be [" +
                             std::to_string(g.k) + "]");
    }
    return g;
}

// A fused convolution op's three gradients into the sink: `compute(gx, gw, gbias)` writes those asked for (null for
// the others) where gy is not empty; an empty gy gives a zero bias gradient.
template <class Compute>
void fused_conv_gradients(GradSink& sink, const Tensor& x, const Tensor& weight, const Tensor& gy, int64_t k,
                          Compute compute) {
    Tensor gx = sink.needs(0) ? Tensor::empty(x.shape(), DType::F32, gy.device()) : Tensor();
    Tensor gw = sink.needs(1) ? Tensor::empty(weight.shape(), DType::F32, gy.device()) : Tensor();
    Tensor gb = sink.needs(2) ? Tensor::empty({k}, DType::F32, gy.device()) : Tensor();
    auto data = [](Tensor& t) { return t.defined() ? t.f32() : nullptr; };
    if (gy.numel())
        compute(data(gx), data(gw), data(gb));
    else if (gb.defined())
        kernels(gy).fill(gb.f32(), 0.f, k);
    if (gx.defined()) sink.add(0, std::move(gx));
    if (gw.defined()) sink.add(1, std::move(gw));
    if (gb.defined()) sink.add(2, std::move(gb));
}

// The layout copy of x's storage (engine/layout_copy.h), offered to the backend calls made while it lives.
layout_copy::Offer offer_copy(const Tensor& x) { return layout_copy::Offer(x.f32(), &x.impl().storage->layout_copy); }
// The weights' conversions kept on their storage, offered likewise; inside a layout_copy::KeepScope a conversion the
// backend makes is kept there.
layout_copy::Offer offer_weights(const Tensor& w) {
    const std::shared_ptr<Storage>& storage = w.impl().storage;
    return layout_copy::Offer(w.f32(), std::shared_ptr<layout_copy::Slot>(storage, &storage->layout_copy));
}
// Both, around each backend call of a convolution op.
struct ConvOffers {
    layout_copy::Offer input, weights;
};
ConvOffers offer_inputs(const Tensor& x, const Tensor& w) { return {offer_copy(x), offer_weights(w)}; }

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding) {
    const ConvGeometry g = checked_geometry("conv2d", x, weight, bias, stride, padding);
    Tensor y = Tensor::empty({g.n, g.k, g.out_h(), g.out_w()}, DType::F32, x.device());
    const AxisView channels{g.n, g.k, g.out_h() * g.out_w()};
    if (y.numel()) {
        const ConvOffers offers = offer_inputs(x, weight);
        kernels(x).conv2d_forward(x.f32(), weight.f32(), y.f32(), g);
        if (bias.defined()) kernels(x).add_channel_bias(y.f32(), bias.f32(), channels);
    }
    record(y, "conv2d", {x, weight, bias}, [x, weight, g, channels](const Tensor& gy, GradSink& sink) {
        Tensor gx = sink.needs(0) ? Tensor::empty(x.shape(), DType::F32, gy.device()) : Tensor();
        Tensor gw = sink.needs(1) ? Tensor::empty(weight.shape(), DType::F32, gy.device()) : Tensor();
        const ConvOffers offers = offer_inputs(x, weight);
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

// relu(conv2d(x, weight, bias)) as one op: the values and gradients of the three, bit for bit (the bias's gradient
// to float summation error where a backend sums it in its own order), with the passes the backend can share shared
// (engine/backend.h). The backward reads relu's output, which is zero exactly where its input was <= 0.
Tensor conv2d_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding) {
    const ConvGeometry g = checked_geometry("conv2d_relu", x, weight, bias, stride, padding);
    Tensor y = Tensor::empty({g.n, g.k, g.out_h(), g.out_w()}, DType::F32, x.device());
    if (y.numel()) {
        const ConvOffers offers = offer_inputs(x, weight);
        write_with_layout_copy(y, [&](float* out) {
            kernels(x).conv2d_bias_relu_forward(x.f32(), weight.f32(), bias.defined() ? bias.f32() : nullptr, out, g);
        });
    }
    if (!any_needs_grad({&x, &weight, &bias})) return y;
    const Tensor y_saved = y.detach();
    record(y, "conv2d_relu", {x, weight, bias}, [x, weight, y_saved, g](const Tensor& gy, GradSink& sink) {
        const ConvOffers offers = offer_inputs(x, weight);
        fused_conv_gradients(sink, x, weight, gy, g.k, [&](float* gx, float* gw, float* gb) {
            kernels(gy).conv2d_relu_backward(x.f32(), weight.f32(), y_saved.f32(), gy.f32(), gx, gw, gb, g);
        });
    });
    return y;
}

// max_pool2d(relu(conv2d(x, weight, bias)), 2) as one op: the values and every gradient of conv2d_relu followed by
// max_pool2d, bit for bit. Only the pooled output and its argmax are kept: the pooled output is relu's output where
// each window took its value, which is all relu's gradient needs (engine/backend.h).
Tensor conv2d_relu_maxpool(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding) {
    const ConvGeometry g = checked_geometry("conv2d_relu_maxpool", x, weight, bias, stride, padding);
    if (g.out_h() % 2 || g.out_w() % 2)
        throw ShapeError("conv2d_relu_maxpool: the convolution's output " +
                         shape_str({g.n, g.k, g.out_h(), g.out_w()}) +
                         " must have even height and width for the 2x2 windows to tile it (run conv2d_relu and "
                         "max_pool2d instead)");
    const PoolGeometry pool{g.n, g.k, g.out_h(), g.out_w(), 2, 2, 0};
    const Shape pooled{g.n, g.k, pool.out_h(), pool.out_w()};
    Tensor y = Tensor::empty(pooled, DType::F32, x.device());
    Tensor argmax = Tensor::empty(pooled, DType::I32, x.device());
    if (y.numel()) {
        const ConvOffers offers = offer_inputs(x, weight);
        write_with_layout_copy(y, [&](float* out) {
            kernels(x).conv2d_bias_relu_maxpool_forward(x.f32(), weight.f32(), bias.defined() ? bias.f32() : nullptr,
                                                        out, argmax.i32(), g);
        });
    }
    if (!any_needs_grad({&x, &weight, &bias})) return y;
    const Tensor y_saved = y.detach();
    const auto backward = [x, weight, y_saved, argmax, g](const Tensor& gy, GradSink& sink) {
        const ConvOffers offers = offer_inputs(x, weight);
        fused_conv_gradients(sink, x, weight, gy, g.k, [&](float* gx, float* gw, float* gb) {
            kernels(gy).conv2d_relu_maxpool_backward(x.f32(), weight.f32(), y_saved.f32(), argmax.i32(), gy.f32(), gx,
                                                     gw, gb, g);
        });
    };
    record(y, "conv2d_relu_maxpool", {x, weight, bias}, backward);
    return y;
}

}  // namespace cw
