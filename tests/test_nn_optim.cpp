// Optimisers against torch.optim, and gradient-norm clipping.
#include "nn/grad_clip.h"
#include "nn/layers.h"
#include "nn/optim.h"
#include "nn/training_state.h"
#include "tests/test_nn_util.h"

using namespace cw;

namespace {

using Rows = std::vector<std::vector<float>>;

// Three steps from p = [1, -2, 0.5] with these gradients, as in the reference script below.
const Rows kGrads = {{0.5f, 0.25f, -1.0f}, {-0.3f, 0.8f, 0.1f}, {0.2f, -0.6f, 0.4f}};

template <class MakeOptimizer>
void require_trajectory(MakeOptimizer make, const Rows& want) {
    Tensor p = Tensor::from_vector({1.0f, -2.0f, 0.5f}, {3}).mark_parameter();
    auto opt = make(std::vector<Tensor*>{&p});
    for (size_t t = 0; t < kGrads.size(); ++t) {
        p.set_grad(Tensor::from_vector(kGrads[t], {3}));
        opt.step();
        INFO("step " << t + 1);
        cw_test::require_close(p.to_vector(), want[t], 2e-6);  // float32 vs torch's float64 run
    }
}

}  // namespace

// Expected values: torch 1.13, float64 parameters, printed with %.9g by
//   p = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)); opt = <optimiser>([p])
//   for g in grads: p.grad = torch.tensor(g, dtype=torch.float64); opt.step(); print(p)
TEST_CASE("optim: SGD matches torch.optim.SGD (momentum, Nesterov, dampening, weight decay)", "[nn]") {
    auto sgd = [](float lr, float momentum, float dampening, float wd, bool nesterov) {
        return [=](std::vector<Tensor*> ps) {
            nn::SgdOptions o;
            o.lr = lr;
            o.momentum = momentum;
            o.dampening = dampening;
            o.weight_decay = wd;
            o.nesterov = nesterov;
            return nn::SGD(std::move(ps), o);
        };
    };
    // SGD(lr=0.1, momentum=0.9, weight_decay=5e-4): the docs/protocols/training.md §3 recipe
    require_trajectory(sgd(0.1f, 0.9f, 0.f, 5e-4f, false), {{0.94995f, -2.0249f, 0.599975f},
                                                            {0.934857502f, -2.12720876f, 0.679922501f},
                                                            {0.901227512f, -2.15918027f, 0.711841256f}});
    // SGD(lr=0.1, momentum=0.9, weight_decay=1e-2, nesterov=True)
    require_trajectory(sgd(0.1f, 0.9f, 0.f, 1e-2f, true), {{0.9031f, -2.0437f, 0.68905f},
                                                           {0.91707411f, -2.21044697f, 0.749335805f},
                                                           {0.863721158f, -2.17215872f, 0.735789436f}});
    // SGD(lr=0.05, momentum=0.5, dampening=0.1): dampening is not applied at the first step
    require_trajectory(sgd(0.05f, 0.5f, 0.1f, 0.f, false), {{0.975f, -2.0125f, 0.55f},
                                                            {0.976f, -2.05475f, 0.5705f},
                                                            {0.9675f, -2.048875f, 0.56275f}});
    // SGD(lr=0.1)
    require_trajectory(sgd(0.1f, 0.f, 0.f, 0.f, false), {{0.95f, -2.025f, 0.6f}, {0.98f, -2.105f, 0.59f},
                                                         {0.96f, -2.045f, 0.55f}});
}

TEST_CASE("optim: Adam and AdamW match torch.optim", "[nn]") {
    auto adam = [](bool decoupled) {
        return [=](std::vector<Tensor*> ps) {
            nn::AdamOptions o;
            o.lr = 1e-2f;
            o.weight_decay = 1e-2f;
            o.decoupled_weight_decay = decoupled;
            return nn::Adam(std::move(ps), o);
        };
    };
    // Adam(lr=1e-2, weight_decay=1e-2): L2 penalty added to the gradient
    require_trajectory(adam(false), {{0.99f, -2.01f, 0.51f},
                                     {0.987857087f, -2.01903224f, 0.515881419f},
                                     {0.984144305f, -2.02070706f, 0.517695044f}});
    // AdamW(lr=1e-2, weight_decay=1e-2): decoupled decay p *= 1 - lr * wd
    require_trajectory(adam(true), {{0.9899f, -2.0098f, 0.50995f},
                                    {0.98788603f, -2.01869968f, 0.51582549f},
                                    {0.984312964f, -2.02049719f, 0.517665399f}});
}

TEST_CASE("optim: parameters without a gradient are left alone", "[nn]") {
    Tensor a = Tensor::from_vector({1.f, 2.f}, {2}).mark_parameter();
    Tensor b = Tensor::from_vector({3.f}, {1}).mark_parameter();
    nn::SGD opt({&a, &b}, nn::SgdOptions{});
    a.set_grad(Tensor::from_vector({1.f, 1.f}, {2}));
    opt.step();
    REQUIRE(b.to_vector() == std::vector<float>{3.f});
    auto state = opt.state_tensors();
    REQUIRE(state.size() == 1);
    REQUIRE(state.count("0.momentum_buffer"));
}

namespace {

std::shared_ptr<nn::Sequential> two_layers(uint64_t seed) {
    Rng rng(seed);
    return std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
        std::make_shared<nn::Linear>(3, 4, true, rng), std::make_shared<nn::Linear>(4, 2, true, rng)});
}

// Step t's gradients; the last parameter gets none before step 2, so its state (Adam: its step count) lags.
void set_grads(nn::Module& m, int t) {
    const auto params = m.parameters();
    for (size_t k = 0; k < params.size(); ++k) {
        params[k]->zero_grad();
        if (k + 1 == params.size() && t < 2) continue;
        params[k]->set_grad(cw_test::randn(params[k]->shape(), 1000 + 10 * t + k, 1.f, false));
    }
}

std::map<std::string, std::vector<float>> values(nn::Optimizer& opt) {
    std::map<std::string, std::vector<float>> out;
    for (const auto& [name, t] : opt.state_tensors()) out[name] = t.to_vector();
    return out;
}

// Same names, and every value equal bit for bit (compared per entry, so a failure names it).
void require_same_state(nn::Optimizer& got, const std::map<std::string, std::vector<float>>& want) {
    const auto have = values(got);
    std::vector<std::string> have_names, want_names;
    for (const auto& e : have) have_names.push_back(e.first);
    for (const auto& e : want) want_names.push_back(e.first);
    REQUIRE(have_names == want_names);
    for (const auto& [name, v] : want) {
        INFO("optimiser state '" << name << "'");
        REQUIRE(have.at(name) == v);
    }
}

std::vector<std::vector<float>> weights(nn::Module& m) {
    std::vector<std::vector<float>> out;
    for (Tensor* p : m.parameters()) out.push_back(p->to_vector());
    return out;
}

// 3 steps, save (training-state file), load into a fresh model and optimiser: every state value equal bit for
// bit; then step 4 on both gives the same weights and state as the uninterrupted run.
template <class MakeOptimizer>
void require_state_round_trip(MakeOptimizer make, size_t expected_entries) {
    cw_nn_test::ScratchDir dir;
    auto model = two_layers(1);
    auto opt = make(model->parameters());
    for (int t = 0; t < 3; ++t) {
        set_grads(*model, t);
        opt.step();
    }
    const std::string path = dir.file("state.safetensors");
    nn::TrainingState saved;
    saved.model = model.get();
    saved.optimizer = &opt;
    nn::save_training_state(path, saved);

    auto resumed_model = two_layers(2);
    auto resumed = make(resumed_model->parameters());
    nn::TrainingState loaded;
    loaded.model = resumed_model.get();
    loaded.optimizer = &resumed;
    nn::load_training_state(path, loaded);

    const auto before = values(opt);
    REQUIRE(before.size() == expected_entries);
    require_same_state(resumed, before);
    REQUIRE(resumed.steps() == opt.steps());
    REQUIRE(resumed.lr() == opt.lr());
    REQUIRE(weights(*resumed_model) == weights(*model));

    for (int t = 3; t < 5; ++t) {
        set_grads(*model, t);
        set_grads(*resumed_model, t);
        opt.step();
        resumed.step();
        INFO("step " << t + 1);
        REQUIRE(weights(*resumed_model) == weights(*model));
        require_same_state(resumed, values(opt));
    }
    REQUIRE(values(opt) != before);   // the continued steps did change the state
}

}  // namespace

TEST_CASE("optim: SGD and Adam state round-trips through a file, values bit for bit, and continues identically",
          "[nn]") {
    SECTION("SGD with momentum") {
        require_state_round_trip(
            [](std::vector<Tensor*> ps) {
                nn::SgdOptions o;
                o.lr = 0.05f;
                o.momentum = 0.9f;
                o.weight_decay = 5e-4f;
                return nn::SGD(std::move(ps), o);
            },
            4);   // one momentum buffer per parameter
    }
    SECTION("Adam") {
        require_state_round_trip(
            [](std::vector<Tensor*> ps) {
                nn::AdamOptions o;
                o.lr = 1e-2f;
                o.weight_decay = 1e-3f;
                return nn::Adam(std::move(ps), o);
            },
            12);  // exp_avg, exp_avg_sq and step per parameter
    }
}

TEST_CASE("optim: Adam keeps a step count per parameter", "[nn]") {
    auto model = two_layers(1);
    nn::Adam opt(model->parameters(), nn::AdamOptions{});
    for (int t = 0; t < 3; ++t) {
        set_grads(*model, t);
        opt.step();
    }
    const auto state = opt.state_tensors();
    REQUIRE(state.at("0.step").item() == 3.f);
    REQUIRE(state.at("3.step").item() == 1.f);   // the last parameter had a gradient at step 3 only
}

TEST_CASE("grad clipping: torch.nn.utils.clip_grad_norm_ semantics", "[nn]") {
    Tensor a = Tensor::from_vector({0.f, 0.f}, {2}).mark_parameter();
    Tensor b = Tensor::from_vector({0.f}, {1}).mark_parameter();
    Tensor no_grad = Tensor::from_vector({0.f}, {1}).mark_parameter();
    a.set_grad(Tensor::from_vector({3.f, 0.f}, {2}));
    b.set_grad(Tensor::from_vector({-4.f}, {1}));
    const std::vector<Tensor*> params = {&a, &b, &no_grad};

    REQUIRE(nn::grad_norm(params) == Approx(5.0));
    // above the norm: unchanged
    REQUIRE(nn::clip_grad_norm(params, 10.0) == Approx(5.0));
    REQUIRE(a.grad().to_vector() == std::vector<float>{3.f, 0.f});
    // below: scaled by max_norm / (norm + 1e-6), and the norm before clipping is returned
    REQUIRE(nn::clip_grad_norm(params, 1.0) == Approx(5.0));
    const double scale = 1.0 / (5.0 + 1e-6);
    cw_test::require_close(a.grad().to_vector(), {static_cast<float>(3 * scale), 0.f}, 1e-6);
    cw_test::require_close(b.grad().to_vector(), {static_cast<float>(-4 * scale)}, 1e-6);
    REQUIRE(nn::grad_norm(params) == Approx(1.0).epsilon(1e-5));
    REQUIRE(!no_grad.grad().defined());
    REQUIRE_THROWS(nn::clip_grad_norm(params, 0.0));
}
