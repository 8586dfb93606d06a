// APGD's second halving condition on its own (docs/protocols/attacks.md §4.3): at a checkpoint the step halves when
// the step was NOT halved at the previous checkpoint and the best objective has not improved since then — even
// though the objective rose over the last iterations (the first condition then says keep the step). The model
// scripts the objective per forward pass, so the trajectory of values is chosen by hand, not found by the attack.
#include <catch2/catch.hpp>

#include <cmath>

#include "attacks/apgd_core.h"
#include "attacks/oracle.h"
#include "nn/layers.h"

using namespace cw;
using namespace cw::attacks;

namespace {

// logits = (0, v_t + 0.001·Σx) at its t-th forward pass: for label 0 the CE objective is softplus(v_t + ...),
// increasing in v_t, and the tiny slope gives the attack a gradient to step along.
class Scripted : public nn::Module {
public:
    explicit Scripted(std::vector<float> script) : Module("Scripted"), script_(std::move(script)) {
        fc_ = register_module("fc", std::make_shared<nn::Linear>(2, 2, true, rng_));
        fc_->weight.copy_from(Tensor::from_vector({0.f, 0.f, 1e-3f, 1e-3f}, {2, 2}));
    }
    Tensor forward(const Tensor& x) override {
        const float v = script_.at(calls_++);
        fc_->bias->copy_from(Tensor::from_vector({0.f, v}, {2}));
        return fc_->forward(flatten(x));
    }

private:
    std::vector<float> script_;
    size_t calls_ = 0;
    Rng rng_{1};
    std::shared_ptr<nn::Linear> fc_;
};

}  // namespace

// N = 10 iterations: checkpoints after iterations 1 (k = 2) and then after every iteration (k = 1). By hand:
//   it 1: two rises, best 3 — keep;  it 2: rise to the best 10 — keep;  it 3: drop to 1, cond1 — halve (ε);
//   it 4: rise to 2, but halved at the last check — keep;  it 5: rise to 3, best still 10 since the last check and
//   not halved there: cond2 alone — halve (ε/2);  it 6 keep;  it 7 cond2 (ε/4);  it 8 keep;  it 9 cond2 (ε/8).
// Seen failing with cond2 removed (η stayed ε from iteration 3 on) and with cond2 ignoring whether the last check
// halved (η halved already at iteration 4).
TEST_CASE("apgd: the step halves when the best objective has not improved since an unhalved checkpoint",
          "[attacks]") {
    const std::vector<float> script{1, 2, 3, 10, 1, 2, 3, 4, 5, 6, 7};   // the start x0, then iterations 0..9
    Scripted model(script);
    model.eval();
    const Tensor x = Tensor::from_vector({0.5f, 0.5f}, {1, 1, 1, 2});
    const Tensor x0 = Tensor::from_vector({0.45f, 0.55f}, {1, 1, 1, 2});
    const float eps = 0.1f;
    ModelOracle oracle(model, x.device());
    ApgdSettings s;
    s.n_iter = 10;
    ApgdTrace trace;
    apgd_run_from(oracle, x, x0, {eps}, make_objective(AttackObjective::CrossEntropy, {0}, x.device()), s, &trace);

    REQUIRE(trace.objective.size() == 10);
    for (size_t i = 0; i < 10; ++i) {   // the objective is the script's, so the halvings below follow from it
        INFO("iteration " << i);
        CHECK(trace.objective[i][0] == Approx(std::log1p(std::exp(script[i + 1]))).margin(1e-2));
    }
    const std::vector<float> want{2 * eps, 2 * eps, 2 * eps, eps, eps, eps / 2, eps / 2, eps / 4, eps / 4, eps / 8};
    REQUIRE(trace.eta.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        INFO("iteration " << i);
        CHECK(trace.eta[i][0] == Approx(want[i]).epsilon(1e-6));
    }
}
