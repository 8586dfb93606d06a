#include "nn/module.h"

namespace cw::nn {

void Module::train(bool on) {
    training_ = on;
    for (auto& [name, child] : children_) child->train(on);
    on_mode_change();
}

Tensor& Module::register_parameter(const std::string& name, Tensor t) {
    t.mark_parameter();
    params_.emplace_back(name, std::move(t));
    return params_.back().second;
}

Tensor& Module::register_buffer(const std::string& name, Tensor t) {
    buffers_.emplace_back(name, std::move(t));
    return buffers_.back().second;
}

void Module::collect(const std::string& prefix, bool params, bool buffers, std::vector<Named>& out) {
    if (params)
        for (auto& [name, t] : params_) out.push_back({prefix + name, &t});
    if (buffers)
        for (auto& [name, t] : buffers_) out.push_back({prefix + name, &t});
    for (auto& [name, child] : children_) child->collect(prefix + name + ".", params, buffers, out);
}

std::vector<Module::Named> Module::named_parameters() {
    std::vector<Named> out;
    collect("", true, false, out);
    return out;
}

std::vector<Module::Named> Module::named_buffers() {
    std::vector<Named> out;
    collect("", false, true, out);
    return out;
}

std::vector<Module::Named> Module::state() {
    std::vector<Named> out;
    collect("", true, true, out);
    return out;
}

std::vector<Tensor*> Module::parameters() {
    std::vector<Tensor*> out;
    for (auto& n : named_parameters()) out.push_back(n.tensor);
    return out;
}

int64_t Module::num_parameters() {
    int64_t n = 0;
    for (auto* p : parameters()) n += p->numel();
    return n;
}

void Module::zero_grad() {
    for (auto* p : parameters()) p->zero_grad();
}

void Module::to(Device device) {
    for (auto& n : state()) {
        if (n.tensor->device() == device) continue;
        const bool is_param = n.tensor->is_parameter();
        Tensor moved = n.tensor->to(device);
        if (is_param) moved.mark_parameter();
        *n.tensor = moved;
    }
}

Device Module::device() {
    auto s = state();
    return s.empty() ? Device::cpu() : s.front().tensor->device();
}

void Module::copy_state_from(Module& other) {
    auto mine = state(), theirs = other.state();
    if (mine.size() != theirs.size())
        throw ShapeError("copy_state_from: " + std::to_string(theirs.size()) + " tensors into a model with " +
                         std::to_string(mine.size()));
    for (size_t i = 0; i < mine.size(); ++i) {
        if (mine[i].name != theirs[i].name)
            throw ShapeError("copy_state_from: tensor '" + theirs[i].name + "' where '" + mine[i].name + "' was expected");
        mine[i].tensor->copy_from(*theirs[i].tensor);
    }
}

}  // namespace cw::nn
