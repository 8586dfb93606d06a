#pragma once
// Optimisers with torch.optim semantics. Parameters without a gradient this step are skipped (as in PyTorch).
// State (momentum buffers, Adam moments, step count) is exposed for checkpoints.
#include <map>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace cw::nn {

class Optimizer {
public:
    explicit Optimizer(std::vector<Tensor*> params, float lr) : params_(std::move(params)), lr_(lr) {}
    virtual ~Optimizer() = default;
    virtual void step() = 0;
    void zero_grad();
    float lr() const { return lr_; }
    void set_lr(float lr) { lr_ = lr; }
    // Named state tensors ("<param index>.<slot>") and scalar counters, for training-state checkpoints.
    virtual std::map<std::string, Tensor> state_tensors() = 0;
    virtual void load_state_tensors(const std::map<std::string, Tensor>& state) = 0;
    int64_t steps() const { return steps_; }
    void set_steps(int64_t s) { steps_ = s; }
protected:
    std::vector<Tensor*> params_;
    float lr_;
    int64_t steps_ = 0;
};

struct SgdOptions {
    float lr = 0.1f;
    float momentum = 0.9f;
    float dampening = 0.f;
    float weight_decay = 5e-4f;
    bool nesterov = false;
};

class SGD : public Optimizer {
public:
    SGD(std::vector<Tensor*> params, const SgdOptions& opt);
    void step() override;
    std::map<std::string, Tensor> state_tensors() override;
    void load_state_tensors(const std::map<std::string, Tensor>& state) override;
private:
    SgdOptions opt_;
    std::vector<Tensor> momentum_;   // undefined until a parameter's first step
};

struct AdamOptions {
    float lr = 1e-3f;
    float beta1 = 0.9f, beta2 = 0.999f;
    float eps = 1e-8f;
    float weight_decay = 0.f;
    bool decoupled_weight_decay = false;  // true = AdamW
};

class Adam : public Optimizer {
public:
    Adam(std::vector<Tensor*> params, const AdamOptions& opt);
    void step() override;
    std::map<std::string, Tensor> state_tensors() override;
    void load_state_tensors(const std::map<std::string, Tensor>& state) override;
private:
    AdamOptions opt_;
    std::vector<Tensor> m_, v_;
    std::vector<int64_t> param_steps_;
};

}  // namespace cw::nn
