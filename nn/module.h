#pragma once
// Module: a layer or model with named parameters and buffers whose dotted names equal the PyTorch state_dict
// keys of the equivalent PyTorch model ("layer1.0.bn1.running_mean"), train/eval mode, and child modules.
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/ops.h"

namespace cw::nn {

class Module {
public:
    virtual ~Module() = default;
    virtual Tensor forward(const Tensor& x) = 0;
    Tensor operator()(const Tensor& x) { return forward(x); }

    // Mode: BatchNorm uses batch statistics and Dropout drops only in training mode.
    void train(bool on = true);
    void eval() { train(false); }
    bool is_training() const { return training_; }

    struct Named {
        std::string name;
        Tensor* tensor;
    };
    std::vector<Named> named_parameters();
    std::vector<Named> named_buffers();
    // Parameters then buffers of each module, in registration order — the state_dict of the PyTorch twin.
    std::vector<Named> state();
    std::vector<Tensor*> parameters();
    int64_t num_parameters();

    void zero_grad();
    void to(Device device);               // moves parameters and buffers (gradients are dropped)
    Device device();
    void copy_state_from(Module& other);  // same architecture; copies every parameter and buffer value

    const std::string& type_name() const { return type_; }

protected:
    explicit Module(std::string type) : type_(std::move(type)) {}
    Tensor& register_parameter(const std::string& name, Tensor t);
    Tensor& register_buffer(const std::string& name, Tensor t);
    template <class M>
    std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
        children_.emplace_back(name, m);
        return m;
    }
    virtual void on_mode_change() {}

private:
    void collect(const std::string& prefix, bool params, bool buffers, std::vector<Named>& out);
    std::string type_;
    bool training_ = true;
    // deques: registering a tensor never moves the ones registered before (callers keep Tensor& to them)
    std::deque<std::pair<std::string, Tensor>> params_;
    std::deque<std::pair<std::string, Tensor>> buffers_;
    std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

using ModulePtr = std::shared_ptr<Module>;

}  // namespace cw::nn
