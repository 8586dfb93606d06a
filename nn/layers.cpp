#include "nn/layers.h"

#include <cmath>
#include <typeinfo>

#include "engine/backend.h"

namespace cw::nn {

namespace {
Tensor uniform(const Shape& shape, float bound, Rng& rng) {
    std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
    rng.fill_uniform(v.data(), v.size(), -bound, bound);
    return Tensor::from_vector(v, shape);
}
}  // namespace

Conv2d::Conv2d(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding, bool with_bias, Rng& rng)
    : Module("Conv2d"),
      weight(register_parameter("weight", uniform({out, in, kernel, kernel},
                                                  1.f / std::sqrt(static_cast<float>(in * kernel * kernel)), rng))),
      stride(stride),
      padding(padding) {
    if (with_bias)
        bias = &register_parameter("bias", uniform({out}, 1.f / std::sqrt(static_cast<float>(in * kernel * kernel)), rng));
}

Tensor Conv2d::forward(const Tensor& x) { return conv2d(x, weight, bias ? *bias : Tensor(), stride, padding); }

Tensor Conv2d::forward_relu(const Tensor& x) {
    return conv2d_relu(x, weight, bias ? *bias : Tensor(), stride, padding);
}

Tensor Conv2d::forward_relu_maxpool(const Tensor& x) {
    if (x.ndim() == 4) {
        const ConvGeometry g{x.size(0), x.size(1), x.size(2), x.size(3), weight.size(0), weight.size(2),
                             weight.size(3), stride, padding};
        if (g.out_h() > 0 && g.out_w() > 0 && g.out_h() % 2 == 0 && g.out_w() % 2 == 0)
            return conv2d_relu_maxpool(x, weight, bias ? *bias : Tensor(), stride, padding);
    }
    return max_pool2d(forward_relu(x), 2);  // odd sizes (and bad input, for conv2d_relu's own message)
}

Linear::Linear(int64_t in, int64_t out, bool with_bias, Rng& rng)
    : Module("Linear"), weight(register_parameter("weight", uniform({out, in}, 1.f / std::sqrt(static_cast<float>(in)), rng))) {
    if (with_bias) bias = &register_parameter("bias", uniform({out}, 1.f / std::sqrt(static_cast<float>(in)), rng));
}

Tensor Linear::forward(const Tensor& x) { return linear(x, weight, bias ? *bias : Tensor()); }

BatchNorm2d::BatchNorm2d(int64_t channels, float momentum, float eps)
    : Module("BatchNorm2d"),
      weight(register_parameter("weight", Tensor::ones({channels}))),
      bias(register_parameter("bias", Tensor::zeros({channels}))),
      running_mean(register_buffer("running_mean", Tensor::zeros({channels}))),
      running_var(register_buffer("running_var", Tensor::ones({channels}))),
      num_batches_tracked(register_buffer("num_batches_tracked", Tensor::zeros({}, DType::I32))),
      momentum(momentum),
      eps(eps) {}

Tensor BatchNorm2d::forward(const Tensor& x) {
    count_batch();
    return batch_norm(x, weight, bias, running_mean, running_var, is_training(), momentum, eps);
}

Tensor BatchNorm2d::forward_relu(const Tensor& x) {
    count_batch();
    return batch_norm_relu(x, weight, bias, running_mean, running_var, is_training(), momentum, eps);
}

void BatchNorm2d::count_batch() {
    // PyTorch counts every training-mode forward (including attack forwards in train mode).
    if (is_training()) backend(num_batches_tracked.device()).add_i32(num_batches_tracked.i32(), 1, 1);
}

Normalize::Normalize(std::vector<float> mean, std::vector<float> std)
    : Module("Normalize"), mean_values(std::move(mean)), std_values(std::move(std)) {
    if (mean_values.size() != std_values.size() || mean_values.empty())
        throw ShapeError("Normalize: mean and std must have the same, non-zero length");
    std::vector<float> inv(std_values.size());
    for (size_t i = 0; i < inv.size(); ++i) {
        if (!(std_values[i] > 0)) throw Error("Normalize: std must be positive");
        inv[i] = 1.f / std_values[i];
    }
    const int64_t c = static_cast<int64_t>(inv.size());
    mean_ = Tensor::from_vector(mean_values, {1, c, 1, 1});
    inv_std_ = Tensor::from_vector(inv, {1, c, 1, 1});
}

Tensor Normalize::forward(const Tensor& x) {
    if (mean_.device() != x.device()) {
        mean_ = mean_.to(x.device());
        inv_std_ = inv_std_.to(x.device());
    }
    if (x.ndim() != 4 || x.size(1) != mean_.size(1))
        throw ShapeError("Normalize: expected [N, " + std::to_string(mean_.size(1)) + ", H, W] input, got " +
                         shape_str(x.shape()));
    return mul(sub(x, mean_), inv_std_);
}

Sequential::Sequential(std::initializer_list<ModulePtr> modules) : Module("Sequential") {
    for (const auto& m : modules) add(m);
}

Sequential& Sequential::add(ModulePtr m) { return add(std::to_string(layers_.size()), std::move(m)); }

Sequential& Sequential::add(const std::string& name, ModulePtr m) {
    register_module(name, m);
    layers_.push_back(std::move(m));
    return *this;
}

Tensor Sequential::forward(const Tensor& x) {
    Tensor h = x;
    for (size_t i = 0; i < layers_.size(); ++i) {
        auto* conv = dynamic_cast<Conv2d*>(layers_[i].get());
        const bool relu_next = i + 1 < layers_.size() && typeid(*layers_[i + 1]) == typeid(ReLU);
        const auto* pool = i + 2 < layers_.size() ? dynamic_cast<MaxPool2d*>(layers_[i + 2].get()) : nullptr;
        const bool pool_after = pool && pool->kernel == 2 && (pool->stride == 2 || pool->stride == -1) &&
                                pool->padding == 0;
        if (conv && relu_next && pool_after) {
            h = conv->forward_relu_maxpool(h);
            i += 2;
        } else if (conv && relu_next) {
            h = conv->forward_relu(h);
            ++i;
        } else {
            h = layers_[i]->forward(h);
        }
    }
    return h;
}

}  // namespace cw::nn
