#include "nn/optim.h"

#include "engine/backend.h"

namespace cw::nn {

void Optimizer::zero_grad() {
    for (Tensor* p : params_) p->zero_grad();
}

SGD::SGD(std::vector<Tensor*> params, const SgdOptions& opt)
    : Optimizer(std::move(params), opt.lr), opt_(opt), momentum_(params_.size()) {
    if (opt.nesterov && (opt.momentum <= 0.f || opt.dampening != 0.f))
        throw Error("SGD: Nesterov momentum requires momentum > 0 and zero dampening");
}

void SGD::step() {
    for (size_t i = 0; i < params_.size(); ++i) {
        Tensor& p = *params_[i];
        Tensor g = p.grad();
        if (!g.defined()) continue;
        const bool first = !momentum_[i].defined();
        if (first && opt_.momentum != 0.f) momentum_[i] = Tensor::empty(p.shape(), DType::F32, p.device());
        backend(p.device()).sgd_step(p.f32(), g.f32(), opt_.momentum != 0.f ? momentum_[i].f32() : nullptr, p.numel(),
                                     lr_, opt_.momentum, opt_.dampening, opt_.weight_decay, opt_.nesterov, first);
    }
    ++steps_;
}

std::map<std::string, Tensor> SGD::state_tensors() {
    std::map<std::string, Tensor> out;
    for (size_t i = 0; i < momentum_.size(); ++i)
        if (momentum_[i].defined()) out[std::to_string(i) + ".momentum_buffer"] = momentum_[i];
    return out;
}

void SGD::load_state_tensors(const std::map<std::string, Tensor>& state) {
    for (size_t i = 0; i < params_.size(); ++i) {
        auto it = state.find(std::to_string(i) + ".momentum_buffer");
        if (it == state.end()) {
            momentum_[i] = Tensor();
            continue;
        }
        if (it->second.shape() != params_[i]->shape())
            throw ShapeError("SGD state: momentum buffer " + std::to_string(i) + " has shape " +
                             shape_str(it->second.shape()) + ", parameter has " + shape_str(params_[i]->shape()));
        momentum_[i] = it->second.to(params_[i]->device());
    }
}

Adam::Adam(std::vector<Tensor*> params, const AdamOptions& opt)
    : Optimizer(std::move(params), opt.lr), opt_(opt), m_(params_.size()), v_(params_.size()),
      param_steps_(params_.size(), 0) {}

void Adam::step() {
    for (size_t i = 0; i < params_.size(); ++i) {
        Tensor& p = *params_[i];
        Tensor g = p.grad();
        if (!g.defined()) continue;
        if (!m_[i].defined()) {
            m_[i] = Tensor::zeros(p.shape(), DType::F32, p.device());
            v_[i] = Tensor::zeros(p.shape(), DType::F32, p.device());
        }
        ++param_steps_[i];
        backend(p.device()).adam_step(p.f32(), g.f32(), m_[i].f32(), v_[i].f32(), p.numel(), lr_, opt_.beta1,
                                      opt_.beta2, opt_.eps, opt_.weight_decay, opt_.decoupled_weight_decay,
                                      param_steps_[i]);
    }
    ++steps_;
}

std::map<std::string, Tensor> Adam::state_tensors() {
    std::map<std::string, Tensor> out;
    for (size_t i = 0; i < m_.size(); ++i) {
        if (!m_[i].defined()) continue;
        out[std::to_string(i) + ".exp_avg"] = m_[i];
        out[std::to_string(i) + ".exp_avg_sq"] = v_[i];
        out[std::to_string(i) + ".step"] = Tensor::full({}, static_cast<float>(param_steps_[i]));
    }
    return out;
}

void Adam::load_state_tensors(const std::map<std::string, Tensor>& state) {
    for (size_t i = 0; i < params_.size(); ++i) {
        const std::string k = std::to_string(i);
        auto m = state.find(k + ".exp_avg"), v = state.find(k + ".exp_avg_sq"), s = state.find(k + ".step");
        if (m == state.end() || v == state.end() || s == state.end()) {
            m_[i] = v_[i] = Tensor();
            param_steps_[i] = 0;
            continue;
        }
        if (m->second.shape() != params_[i]->shape() || v->second.shape() != params_[i]->shape())
            throw ShapeError("Adam state: moments of parameter " + k + " do not match its shape " +
                             shape_str(params_[i]->shape()));
        m_[i] = m->second.to(params_[i]->device());
        v_[i] = v->second.to(params_[i]->device());
        param_steps_[i] = static_cast<int64_t>(s->second.item());
    }
}

}  // namespace cw::nn
