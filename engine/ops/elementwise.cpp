// Elementwise ops: unary maps and broadcasting binary maps, each forward next to its backward.
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

namespace {

Tensor unary_op(const char* name, UnaryOp op, const Tensor& x, float a = 0.f, float b = 0.f) {
    check_inputs(name, {&x});
    Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
    if (x.numel()) kernels(x).unary(op, x.f32(), y.f32(), x.numel(), a, b);
    if (needs_grad(x)) {
        Tensor y_saved = y.detach();
        record(y, name, {x}, [x, y_saved, op, a, b](const Tensor& gy, GradSink& sink) {
            Tensor gx = Tensor::empty(x.shape(), DType::F32, x.device());
            if (gx.numel())
                kernels(x).unary_backward(op, x.f32(), y_saved.f32(), gy.f32(), gx.f32(), x.numel(), a, b);
            sink.add(0, std::move(gx));
        });
    }
    return y;
}

Tensor binary_op(const char* name, BinaryOp op, const Tensor& a, const Tensor& b) {
    check_inputs(name, {&a, &b});
    Shape out_shape;
    const BroadcastIndex bi = broadcast_index(name, a.shape(), b.shape(), out_shape);
    Tensor y = Tensor::empty(out_shape, DType::F32, a.device());
    if (y.numel()) kernels(a).binary(op, a.f32(), b.f32(), y.f32(), bi);
    const bool piecewise_constant = op == BinaryOp::Greater || op == BinaryOp::GreaterEqual;
    if (!piecewise_constant && any_needs_grad({&a, &b})) {
        record(y, name, {a, b}, [a, b, op, bi, out_shape](const Tensor& gy, GradSink& sink) {
            const bool need_a = sink.needs(0), need_b = sink.needs(1);
            // Add/Sub pass the gradient through unchanged when no reduction is needed.
            if (op == BinaryOp::Add && (!need_a || a.shape() == out_shape) && (!need_b || b.shape() == out_shape)) {
                if (need_a) sink.add(0, gy);
                if (need_b) sink.add(1, gy);
                return;
            }
            Tensor ga = need_a ? Tensor::empty(out_shape, DType::F32, gy.device()) : Tensor();
            Tensor gb = need_b ? Tensor::empty(out_shape, DType::F32, gy.device()) : Tensor();
            if (gy.numel())
                kernels(gy).binary_backward(op, a.f32(), b.f32(), gy.f32(), need_a ? ga.f32() : nullptr,
                                            need_b ? gb.f32() : nullptr, bi);
            if (need_a) sink.add(0, sum_to_shape(ga, a.shape()));
            if (need_b) sink.add(1, sum_to_shape(gb, b.shape()));
        });
    }
    return y;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return binary_op("add", BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary_op("sub", BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary_op("mul", BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary_op("div", BinaryOp::Div, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary_op("minimum", BinaryOp::Min, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary_op("maximum", BinaryOp::Max, a, b); }
Tensor greater(const Tensor& a, const Tensor& b) { return binary_op("greater", BinaryOp::Greater, a, b); }
Tensor greater_equal(const Tensor& a, const Tensor& b) {
    return binary_op("greater_equal", BinaryOp::GreaterEqual, a, b);
}

Tensor add(const Tensor& x, float s) { return unary_op("add_scalar", UnaryOp::AddScalar, x, s); }
Tensor mul(const Tensor& x, float s) { return unary_op("mul_scalar", UnaryOp::MulScalar, x, s); }
Tensor rsub(float s, const Tensor& x) { return unary_op("rsub_scalar", UnaryOp::RSubScalar, x, s); }
Tensor neg(const Tensor& x) { return unary_op("neg", UnaryOp::Neg, x); }
Tensor exp(const Tensor& x) { return unary_op("exp", UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return unary_op("log", UnaryOp::Log, x); }
Tensor square(const Tensor& x) { return unary_op("square", UnaryOp::Square, x); }
Tensor sqrt(const Tensor& x) { return unary_op("sqrt", UnaryOp::Sqrt, x); }
Tensor pow(const Tensor& x, float e) { return unary_op("pow", UnaryOp::Pow, x, e); }
Tensor abs(const Tensor& x) { return unary_op("abs", UnaryOp::Abs, x); }
Tensor sign(const Tensor& x) { return unary_op("sign", UnaryOp::Sign, x); }
Tensor clamp(const Tensor& x, float lo, float hi) {
    if (lo > hi) throw Error("clamp: lo " + std::to_string(lo) + " is greater than hi " + std::to_string(hi));
    return unary_op("clamp", UnaryOp::Clamp, x, lo, hi);
}
Tensor relu(const Tensor& x) { return unary_op("relu", UnaryOp::Relu, x); }
Tensor leaky_relu(const Tensor& x, float slope) { return unary_op("leaky_relu", UnaryOp::LeakyRelu, x, slope); }
Tensor sigmoid(const Tensor& x) { return unary_op("sigmoid", UnaryOp::Sigmoid, x); }
Tensor tanh(const Tensor& x) { return unary_op("tanh", UnaryOp::Tanh, x); }
Tensor silu(const Tensor& x) { return unary_op("silu", UnaryOp::Silu, x); }

}  // namespace cw
