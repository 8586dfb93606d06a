// Weight averaging (docs/protocols/training.md §10): the math over every state entry, BN buffers included, and the hooks.
#include "nn/ema.h"
#include "nn/layers.h"
#include "tests/test_nn_util.h"

using namespace cw;

namespace {

std::shared_ptr<nn::Sequential> tiny_net() {
    return std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
        std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Linear>(4, 2)});
}

void set_all(nn::Module& m, float offset) {
    int k = 0;
    for (auto& e : m.state()) {
        if (e.tensor->dtype() == DType::I32) {
            e.tensor->copy_from(Tensor::from_ints({static_cast<int32_t>(offset)}, {}));
            continue;
        }
        std::vector<float> v(static_cast<size_t>(e.tensor->numel()));
        for (size_t i = 0; i < v.size(); ++i) v[i] = offset + 0.1f * static_cast<float>(k++);
        e.tensor->copy_from(Tensor::from_vector(v, e.tensor->shape()));
    }
}

}  // namespace

TEST_CASE("EMA: the first update copies, later ones average every state entry", "[nn]") {
    auto model = tiny_net();
    nn::ModelEma ema(tiny_net(), {0.85f, nn::EmaEvery::Epoch, 0});
    set_all(*model, 1.f);
    ema.update(*model);
    REQUIRE(ema.num_updates() == 1);
    auto avg = ema.averaged().state(), cur = model->state();
    for (size_t i = 0; i < avg.size(); ++i) {
        INFO(avg[i].name);
        if (avg[i].tensor->dtype() == DType::F32) REQUIRE(avg[i].tensor->to_vector() == cur[i].tensor->to_vector());
        else REQUIRE(avg[i].tensor->to_int_vector() == cur[i].tensor->to_int_vector());
    }

    std::vector<std::vector<float>> before;
    for (auto& e : avg)
        if (e.tensor->dtype() == DType::F32) before.push_back(e.tensor->to_vector());
    set_all(*model, 7.f);
    ema.update(*model);
    size_t f = 0;
    bool saw_running_var = false;
    for (size_t i = 0; i < avg.size(); ++i) {
        INFO(avg[i].name);
        if (avg[i].tensor->dtype() == DType::I32) {  // num_batches_tracked: copied
            REQUIRE(avg[i].tensor->to_int_vector() == std::vector<int32_t>{7});
            continue;
        }
        saw_running_var |= avg[i].name == "1.running_var";
        const auto x = cur[i].tensor->to_vector(), got = avg[i].tensor->to_vector();
        const auto& old = before[f++];
        for (size_t j = 0; j < got.size(); ++j)
            REQUIRE(got[j] == Approx(0.85f * old[j] + 0.15f * x[j]).epsilon(1e-6));  // θ̄ ← α θ̄ + (1 − α) θ
    }
    REQUIRE(saw_running_var);  // BN running statistics are averaged too
}

TEST_CASE("EMA: epoch / step hooks and the start epoch", "[nn]") {
    auto model = tiny_net();
    nn::ModelEma per_epoch(tiny_net(), {0.85f, nn::EmaEvery::Epoch, 50});
    per_epoch.after_epoch(*model, 49);
    per_epoch.after_step(*model, 60);
    REQUIRE(per_epoch.num_updates() == 0);
    per_epoch.after_epoch(*model, 50);
    REQUIRE(per_epoch.num_updates() == 1);

    nn::ModelEma per_step(tiny_net(), {0.999f, nn::EmaEvery::Step, 0});
    per_step.after_epoch(*model, 0);
    REQUIRE(per_step.num_updates() == 0);
    for (int i = 0; i < 3; ++i) per_step.after_step(*model, 0);
    REQUIRE(per_step.num_updates() == 3);
}

TEST_CASE("EMA: the averaged model evaluates with averaged BN statistics", "[nn]") {
    auto model = tiny_net();
    const float decay = 0.75f;   // not 0.5: swapping decay and 1 − decay must show
    nn::ModelEma ema(tiny_net(), {decay, nn::EmaEvery::Step, 0});
    Tensor x = cw_test::randn({8, 3}, 1, 1.f, false);
    nn::BatchNorm2d& bn = dynamic_cast<nn::BatchNorm2d&>(*(*model)[1]);
    // Three train-mode forwards move the model's running statistics; average after each.
    std::vector<std::vector<float>> means, vars;
    for (int i = 0; i < 3; ++i) {
        model->train();
        model->forward(add(x, static_cast<float>(i)));
        means.push_back(bn.running_mean.to_vector());
        vars.push_back(bn.running_var.to_vector());
        ema.after_step(*model, 0);
    }
    // θ̄₁ = θ₁ (the first update copies), θ̄ₖ = α θ̄ₖ₋₁ + (1 − α) θₖ
    auto averaged = [&](const std::vector<std::vector<float>>& s) {
        std::vector<float> out = s[0];
        for (size_t k = 1; k < s.size(); ++k)
            for (size_t j = 0; j < out.size(); ++j)
                out[j] = static_cast<float>(double(decay) * out[j] + (1.0 - decay) * s[k][j]);
        return out;
    };
    const std::vector<float> want_mean = averaged(means), want_var = averaged(vars);
    REQUIRE(want_mean != means.back());   // the statistics did move between updates
    auto& avg = ema.averaged();
    nn::BatchNorm2d& bn_avg = dynamic_cast<nn::BatchNorm2d&>(*dynamic_cast<nn::Sequential&>(avg)[1]);
    cw_test::require_close(bn_avg.running_mean.to_vector(), want_mean, 1e-6);
    cw_test::require_close(bn_avg.running_var.to_vector(), want_var, 1e-6);
    REQUIRE(bn_avg.num_batches_tracked.to_int_vector() == std::vector<int32_t>{3});   // copied, not averaged

    // Weights never changed, so the averaged model is the model with those statistics: same eval logits.
    auto expected = tiny_net();
    expected->copy_state_from(*model);
    auto& bn_expected = dynamic_cast<nn::BatchNorm2d&>(*(*expected)[1]);
    bn_expected.running_mean.copy_from(Tensor::from_vector(want_mean, {4}));
    bn_expected.running_var.copy_from(Tensor::from_vector(want_var, {4}));
    avg.eval();
    expected->eval();
    model->eval();
    NoGradGuard ng;
    const auto y_avg = avg.forward(x).to_vector();
    cw_test::require_close(y_avg, expected->forward(x).to_vector(), 1e-5);
    REQUIRE(y_avg != model->forward(x).to_vector());
}

TEST_CASE("EMA: mismatched architectures and bad decay are errors", "[nn]") {
    auto other = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{std::make_shared<nn::Linear>(3, 4)});
    nn::ModelEma ema(other);
    auto model = tiny_net();
    REQUIRE_THROWS_AS(ema.update(*model), ShapeError);
    REQUIRE_THROWS_AS(nn::ModelEma(tiny_net(), {1.5f, nn::EmaEvery::Epoch, 0}), Error);
}
