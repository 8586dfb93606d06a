// Batch normalisation and dropout: the two ops whose behaviour depends on train/eval mode.
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

namespace {

// batch_norm, and with `relu` batch_norm_relu: one kernel pass each way instead of two ops.
Tensor batch_norm_op(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& running_mean,
                     Tensor& running_var, bool training, float momentum, float eps, bool relu) {
    const char* name = relu ? "batch_norm_relu" : "batch_norm";
    check_inputs(name, {&x, &gamma, &beta, &running_mean, &running_var});
    if (x.ndim() != 2 && x.ndim() != 4)
        throw ShapeError(std::string(name) + ": input must be [N,C] or [N,C,H,W], got " + shape_str(x.shape()));
    const int64_t c = x.size(1);
    for (const Tensor* t : std::initializer_list<const Tensor*>{&gamma, &beta, &running_mean, &running_var})
        if (t->shape() != Shape{c})
            throw ShapeError(std::string(name) + ": parameter/statistic " + shape_str(t->shape()) + " must be [" +
                             std::to_string(c) + "] for input " + shape_str(x.shape()));
    const AxisView v{x.size(0), c, x.ndim() == 4 ? x.size(2) * x.size(3) : 1};
    if (training && v.outer * v.inner < 2)
        throw ShapeError(std::string(name) + ": training mode needs more than one value per channel, got input " +
                         shape_str(x.shape()));
    Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
    if (training) {
        Tensor save_mean = Tensor::empty({c}, DType::F32, x.device());
        Tensor save_invstd = Tensor::empty({c}, DType::F32, x.device());
        write_with_layout_copy(y, [&](float* out) {
            kernels(x).batchnorm_forward_train(x.f32(), gamma.f32(), beta.f32(), out, save_mean.f32(),
                                               save_invstd.f32(), running_mean.f32(), running_var.f32(), v, momentum,
                                               eps, relu);
        });
        record(y, relu ? "batch_norm_relu(train)" : "batch_norm(train)", {x, gamma, beta},
               [x, gamma, beta, save_mean, save_invstd, v, relu](const Tensor& gy, GradSink& sink) {
                   Tensor gx = sink.needs(0) ? Tensor::empty(x.shape(), DType::F32, gy.device()) : Tensor();
                   Tensor gg = sink.needs(1) ? Tensor::empty(gamma.shape(), DType::F32, gy.device()) : Tensor();
                   Tensor gb = sink.needs(2) ? Tensor::empty(gamma.shape(), DType::F32, gy.device()) : Tensor();
                   kernels(gy).batchnorm_backward_train(x.f32(), gamma.f32(), beta.f32(), gy.f32(), save_mean.f32(),
                                                        save_invstd.f32(), gx.defined() ? gx.f32() : nullptr,
                                                        gg.defined() ? gg.f32() : nullptr,
                                                        gb.defined() ? gb.f32() : nullptr, v, relu);
                   if (gx.defined()) sink.add(0, std::move(gx));
                   if (gg.defined()) sink.add(1, std::move(gg));
                   if (gb.defined()) sink.add(2, std::move(gb));
               });
    } else {
        write_with_layout_copy(y, [&](float* out) {
            kernels(x).batchnorm_forward_eval(x.f32(), gamma.f32(), beta.f32(), out, running_mean.f32(),
                                              running_var.f32(), v, eps, relu);
        });
        if (!any_needs_grad({&x, &gamma, &beta})) return y;
        // The statistics are captured by value: later training steps may update them in place.
        Tensor mean_now = running_mean.clone(), var_now = running_var.clone();
        record(y, relu ? "batch_norm_relu(eval)" : "batch_norm(eval)", {x, gamma, beta},
               [x, gamma, beta, mean_now, var_now, v, eps, relu](const Tensor& gy, GradSink& sink) {
                   Tensor gx = sink.needs(0) ? Tensor::empty(x.shape(), DType::F32, gy.device()) : Tensor();
                   Tensor gg = sink.needs(1) ? Tensor::empty(gamma.shape(), DType::F32, gy.device()) : Tensor();
                   Tensor gb = sink.needs(2) ? Tensor::empty(gamma.shape(), DType::F32, gy.device()) : Tensor();
                   kernels(gy).batchnorm_backward_eval(x.f32(), gamma.f32(), beta.f32(), gy.f32(), mean_now.f32(),
                                                       var_now.f32(), gx.defined() ? gx.f32() : nullptr,
                                                       gg.defined() ? gg.f32() : nullptr,
                                                       gb.defined() ? gb.f32() : nullptr, v, eps, relu);
                   if (gx.defined()) sink.add(0, std::move(gx));
                   if (gg.defined()) sink.add(1, std::move(gg));
                   if (gb.defined()) sink.add(2, std::move(gb));
               });
    }
    return y;
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& running_mean,
                  Tensor& running_var, bool training, float momentum, float eps) {
    return batch_norm_op(x, gamma, beta, running_mean, running_var, training, momentum, eps, false);
}

Tensor batch_norm_relu(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& running_mean,
                       Tensor& running_var, bool training, float momentum, float eps) {
    return batch_norm_op(x, gamma, beta, running_mean, running_var, training, momentum, eps, true);
}

Tensor dropout(const Tensor& x, float p, bool training, Rng& rng) {
    check_inputs("dropout", {&x});
    if (p < 0.f || p >= 1.f) throw Error("dropout: p must be in [0, 1), got " + std::to_string(p));
    if (!training || p == 0.f) return x;
    // The mask is drawn on the host from the engine RNG so every device sees the same mask for the same seed.
    std::vector<float> keep(static_cast<size_t>(x.numel()));
    for (auto& k : keep) k = rng.uniform() >= p ? 1.f : 0.f;
    Tensor mask = Tensor::from_vector(keep, x.shape(), x.device());
    const float scale = 1.f / (1.f - p);
    Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
    if (y.numel()) kernels(x).masked_scale(x.f32(), mask.f32(), y.f32(), x.numel(), scale);
    record(y, "dropout", {x}, [mask, scale](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::empty(mask.shape(), DType::F32, gy.device());
        if (gx.numel()) kernels(gy).masked_scale(gy.f32(), mask.f32(), gx.f32(), gx.numel(), scale);
        sink.add(0, std::move(gx));
    });
    return y;
}

}  // namespace cw
