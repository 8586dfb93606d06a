#pragma once
// Shared fixtures of the attack tests: a synthetic 10-class image problem on which a small MLP trains in about a
// second, so attacks have something to break (ε around 0.03–0.05 drops its accuracy a lot but not to zero), and a
// wrapper that counts the samples pushed through a model.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "attacks/attack.h"
#include "engine/ops.h"
#include "nn/layers.h"
#include "nn/optim.h"

namespace cw_test {

struct Blobs {
    cw::Tensor x, y;        // x [N, 3, 8, 8] in [0,1], y int32 [N]
    std::vector<int32_t> labels;
};

constexpr int kClasses = 10;
constexpr float kBlobEps = 0.04f;   // the radius most attack tests use on this problem

// Class k: 0.5 + 0.06·s_k + 0.12·noise, s_k a fixed random ±1 pattern per class; clipped to [0, 1].
inline Blobs make_blobs(int n, uint64_t seed) {
    cw::Rng pattern_rng(1234), rng(seed);
    std::vector<std::vector<float>> sign(kClasses, std::vector<float>(192));
    for (auto& s : sign)
        for (auto& v : s) v = pattern_rng.uniform() < 0.5f ? -1.f : 1.f;
    Blobs b;
    std::vector<float> xs(static_cast<size_t>(n) * 192);
    for (int i = 0; i < n; ++i) {
        const int k = static_cast<int>(rng.below(kClasses));
        b.labels.push_back(k);
        for (int j = 0; j < 192; ++j)
            xs[i * 192 + j] = std::min(std::max(0.5f + 0.06f * sign[k][j] + 0.12f * rng.normal(), 0.f), 1.f);
    }
    b.x = cw::Tensor::from_vector(xs, {n, 3, 8, 8});
    b.y = cw::Tensor::from_labels(b.labels);
    return b;
}

inline std::shared_ptr<cw::nn::Sequential> make_mlp(uint64_t seed) {
    cw::Rng rng(seed);
    return std::make_shared<cw::nn::Sequential>(std::initializer_list<cw::nn::ModulePtr>{
        std::make_shared<cw::nn::Flatten>(), std::make_shared<cw::nn::Linear>(192, 64, true, rng),
        std::make_shared<cw::nn::ReLU>(), std::make_shared<cw::nn::Linear>(64, kClasses, true, rng)});
}

inline void train(cw::nn::Module& model, int steps, uint64_t seed) {
    cw::nn::SgdOptions o;
    o.lr = 0.05f;
    o.weight_decay = 0.f;
    cw::nn::SGD sgd(model.parameters(), o);
    model.train();
    for (int s = 0; s < steps; ++s) {
        const Blobs b = make_blobs(64, seed + static_cast<uint64_t>(s));
        sgd.zero_grad();
        cw::cross_entropy(model.forward(b.x), b.y).backward();
        sgd.step();
    }
    model.eval();
}

// The shared MLP's recipe: trained on the host, then moved to `device` (a fresh copy each call; the GPU parity
// tests take one on the GPU).
inline std::shared_ptr<cw::nn::Sequential> trained_mlp_on(cw::Device device) {
    auto m = make_mlp(7);
    train(*m, 300, 100);
    m->to(device);
    m->eval();
    return m;
}

// One MLP trained once per test process and shared (read-only) by the tests.
inline std::shared_ptr<cw::nn::Sequential> trained_mlp_ptr() {
    static std::shared_ptr<cw::nn::Sequential> model = trained_mlp_on(cw::Device::cpu());
    model->eval();
    return model;
}
inline cw::nn::Module& trained_mlp() { return *trained_mlp_ptr(); }

// The test set every attack test uses. Every tenth label is wrong on purpose, so clean accuracy is about 90%
// and "robust accuracy <= clean accuracy" is not trivially true.
inline const Blobs& test_blobs() {
    static const Blobs b = [] {
        Blobs t = make_blobs(96, 999);
        for (size_t i = 3; i < t.labels.size(); i += 10) t.labels[i] = (t.labels[i] + 1) % kClasses;
        t.y = cw::Tensor::from_labels(t.labels);
        return t;
    }();
    return b;
}

inline double accuracy(cw::nn::Module& model, const cw::Tensor& x, const std::vector<int32_t>& y) {
    cw::NoGradGuard g;
    const auto pred = cw::argmax(model.forward(x), 1).to_int_vector();
    int ok = 0;
    for (size_t i = 0; i < y.size(); ++i) ok += pred[i] == y[i];
    return double(ok) / double(y.size());
}

inline double accuracy_of(const std::vector<int32_t>& pred, const std::vector<int32_t>& y) {
    int ok = 0;
    for (size_t i = 0; i < y.size(); ++i) ok += pred[i] == y[i];
    return double(ok) / double(y.size());
}

// Counts rows through the wrapped model (attacks see it as the model).
class CountingModel : public cw::nn::Module {
public:
    explicit CountingModel(std::shared_ptr<cw::nn::Module> inner) : Module("CountingModel"), inner_(inner) {
        register_module("inner", inner_);
    }
    cw::Tensor forward(const cw::Tensor& x) override {
        forwards += x.size(0);
        return inner_->forward(x);
    }
    int64_t forwards = 0;
private:
    std::shared_ptr<cw::nn::Module> inner_;
};

// Attacks print one line when they start; keep test output short.
struct QuietAttacks {
    QuietAttacks() : prev(cw::attacks::default_attack_log()) { cw::attacks::default_attack_log() = nullptr; }
    ~QuietAttacks() { cw::attacks::default_attack_log() = prev; }
    std::ostream* prev;
};

}  // namespace cw_test
