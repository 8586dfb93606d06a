#include "nn/ema.h"

#include "engine/backend.h"

namespace cw::nn {

ModelEma::ModelEma(std::shared_ptr<Module> average, EmaOptions options)
    : average_(std::move(average)), options_(options) {
    if (!average_) throw Error("ModelEma: no model instance for the averages");
    if (!(options_.decay >= 0.f && options_.decay <= 1.f))
        throw Error("ModelEma: decay must be in [0, 1], got " + std::to_string(options_.decay));
}

void ModelEma::update(Module& model) {
    if (updates_ == 0) {
        average_->copy_state_from(model);  // checks names and count
        ++updates_;
        return;
    }
    auto avg = average_->state(), cur = model.state();
    if (avg.size() != cur.size()) throw ShapeError("ModelEma: the model's state differs from the averaged model's");
    for (size_t i = 0; i < avg.size(); ++i) {
        Tensor& a = *avg[i].tensor;
        const Tensor& x = *cur[i].tensor;
        if (avg[i].name != cur[i].name || a.shape() != x.shape() || a.dtype() != x.dtype())
            throw ShapeError("ModelEma: state entry '" + cur[i].name + "' does not match '" + avg[i].name + "'");
        if (a.device() != x.device())
            throw DeviceError("ModelEma: the averaged model is on " + a.device().str() + ", the model on " +
                              x.device().str());
        if (a.dtype() == DType::F32) backend(a.device()).lerp_(a.f32(), x.f32(), a.numel(), options_.decay);
        else a.copy_from(x);
    }
    ++updates_;
}

void ModelEma::after_step(Module& model, int64_t epoch) {
    if (options_.every == EmaEvery::Step && epoch >= options_.start_epoch) update(model);
}

void ModelEma::after_epoch(Module& model, int64_t epoch) {
    if (options_.every == EmaEvery::Epoch && epoch >= options_.start_epoch) update(model);
}

}  // namespace cw::nn
