// Optimisers against torch.optim, and gradient-norm clipping.
#include "nn/grad_clip.h"
#include "nn/optim.h"
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
    // SGD(lr=0.1, momentum=0.9, weight_decay=5e-4): the training.md §3 recipe
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

TEST_CASE("optim: parameters without a gradient are left alone; state round-trips", "[nn]") {
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
