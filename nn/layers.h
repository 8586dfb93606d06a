#pragma once
// The standard layers, each a thin Module over one engine op. Initialisation follows PyTorch's defaults
// (Kaiming-uniform with a = sqrt(5) for conv/linear weights, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) biases,
// BN weight 1 / bias 0) and draws from the engine RNG, so --seed fixes it.
#include <functional>
#include <initializer_list>

#include "nn/module.h"

namespace cw::nn {

class Conv2d : public Module {
public:
    Conv2d(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, int64_t padding = 0, bool bias = true,
           Rng& rng = global_rng());
    Tensor forward(const Tensor& x) override;
    // relu(forward(x)) as one op (conv2d_relu): what Sequential runs for a Conv2d followed by a ReLU.
    Tensor forward_relu(const Tensor& x);
    // max_pool2d(relu(forward(x)), 2) as one op (conv2d_relu_maxpool) where the convolution's output has even
    // height and width, else as conv2d_relu and max_pool2d: what Sequential runs for Conv2d, ReLU, MaxPool2d(2).
    Tensor forward_relu_maxpool(const Tensor& x);
    Tensor& weight;
    Tensor* bias = nullptr;
    const int64_t stride, padding;
};

class Linear : public Module {
public:
    Linear(int64_t in, int64_t out, bool bias = true, Rng& rng = global_rng());
    Tensor forward(const Tensor& x) override;
    Tensor& weight;
    Tensor* bias = nullptr;
};

class BatchNorm2d : public Module {  // also accepts [N, C] (BatchNorm1d)
public:
    explicit BatchNorm2d(int64_t channels, float momentum = 0.1f, float eps = 1e-5f);
    Tensor forward(const Tensor& x) override;
    // relu(forward(x)) as one fused op (batch_norm_relu): what a pre-activation block calls.
    Tensor forward_relu(const Tensor& x);
    Tensor &weight, &bias, &running_mean, &running_var, &num_batches_tracked;
    const float momentum, eps;

private:
    void count_batch();
};

class ReLU : public Module {
public:
    ReLU() : Module("ReLU") {}
    Tensor forward(const Tensor& x) override { return relu(x); }
};

class MaxPool2d : public Module {
public:
    MaxPool2d(int64_t kernel, int64_t stride = -1, int64_t padding = 0)
        : Module("MaxPool2d"), kernel(kernel), stride(stride), padding(padding) {}
    Tensor forward(const Tensor& x) override { return max_pool2d(x, kernel, stride, padding); }
    const int64_t kernel, stride, padding;
};

class AvgPool2d : public Module {
public:
    AvgPool2d(int64_t kernel, int64_t stride = -1, int64_t padding = 0)
        : Module("AvgPool2d"), kernel(kernel), stride(stride), padding(padding) {}
    Tensor forward(const Tensor& x) override { return avg_pool2d(x, kernel, stride, padding); }
    const int64_t kernel, stride, padding;
};

// AdaptiveAvgPool2d((1,1)) followed by flatten: [N,C,H,W] -> [N,C]
class GlobalAvgPool : public Module {
public:
    GlobalAvgPool() : Module("GlobalAvgPool") {}
    Tensor forward(const Tensor& x) override { return global_avg_pool2d(x); }
};

// nn.Identity: keeps a Sequential's child numbering where a layer is left out (VGG at 28x28).
class Identity : public Module {
public:
    Identity() : Module("Identity") {}
    Tensor forward(const Tensor& x) override { return x; }
};

class Flatten : public Module {
public:
    Flatten() : Module("Flatten") {}
    Tensor forward(const Tensor& x) override { return flatten(x); }
};

class Dropout : public Module {
public:
    explicit Dropout(float p, Rng& rng = global_rng()) : Module("Dropout"), p(p), rng_(rng) {}
    Tensor forward(const Tensor& x) override { return dropout(x, p, is_training(), rng_); }
    const float p;
private:
    Rng& rng_;
};

// (x - mean) / std per channel, as the first layer: attacks work in [0,1] pixel space.
class Normalize : public Module {
public:
    Normalize(std::vector<float> mean, std::vector<float> std);
    Tensor forward(const Tensor& x) override;
    const std::vector<float> mean_values, std_values;
private:
    Tensor mean_, inv_std_;  // [1,C,1,1], not part of the state dict
};

// Children are named "0", "1", ... like torch.nn.Sequential, or given names like
// torch.nn.Sequential(OrderedDict(...)) (TRADES' SmallCNN: "feature_extractor.conv1").
// A Conv2d directly followed by a ReLU runs as one conv2d_relu op, and by a ReLU and a 2x2 stride-2 MaxPool2d as
// one conv2d_relu_maxpool op: the same values and gradients, fewer passes.
class Sequential : public Module {
public:
    Sequential() : Module("Sequential") {}
    Sequential(std::initializer_list<ModulePtr> modules);
    Sequential& add(ModulePtr m);
    Sequential& add(const std::string& name, ModulePtr m);
    Tensor forward(const Tensor& x) override;
    size_t size() const { return layers_.size(); }
    ModulePtr operator[](size_t i) const { return layers_.at(i); }
private:
    std::vector<ModulePtr> layers_;
};

// A Module from a function, for glue that has no parameters.
class Lambda : public Module {
public:
    explicit Lambda(std::function<Tensor(const Tensor&)> fn) : Module("Lambda"), fn_(std::move(fn)) {}
    Tensor forward(const Tensor& x) override { return fn_(x); }
private:
    std::function<Tensor(const Tensor&)> fn_;
};

}  // namespace cw::nn
