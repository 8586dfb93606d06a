// The benchmark's FLOP count (bench/flop_count.h) against PreAct ResNet-18's convolutions and linear layer added up
// by hand: a training step counts forward, weight gradients and data gradients for every layer but the first; an
// attack step (InputGradOnly) data gradients for every layer and no weight gradient; a PGD-K adversarial-training
// step, as pgd_at runs it, K attack steps and one training step.
#include <catch2/catch.hpp>

#include "bench/flop_count.h"
#include "engine/ops.h"
#include "nn/model_registry.h"
#include "nn/optim.h"
#include "train/methods/pgd_at.h"

using namespace cw;

namespace {

constexpr int64_t kN = 2;

// Multiply-accumulates of one 32x32 image through PreAct ResNet-18: conv layers as out_h·out_w·K·C·R·S.
constexpr double kStemMacs = 32.0 * 32 * 64 * 3 * 9;
constexpr double kPreActMacs = kStemMacs
    + 4 * (32.0 * 32 * 64 * 64 * 9)                                                       // layer1
    + 16.0 * 16 * 128 * 64 * 9 + 3 * (16.0 * 16 * 128 * 128 * 9) + 16.0 * 16 * 128 * 64   // layer2 + 1x1 shortcut
    + 8.0 * 8 * 256 * 128 * 9 + 3 * (8.0 * 8 * 256 * 256 * 9) + 8.0 * 8 * 256 * 128      // layer3
    + 4.0 * 4 * 512 * 256 * 9 + 3 * (4.0 * 4 * 512 * 512 * 9) + 4.0 * 4 * 512 * 256      // layer4
    + 512.0 * 10;                                                                          // linear

struct Fixture {
    std::shared_ptr<nn::Module> model;
    Tensor x, labels;
    std::vector<int32_t> host_labels{3, 7};
    Fixture() {
        manual_seed(0);
        model = nn::make_model("preact_resnet18");
        std::vector<float> v(static_cast<size_t>(kN * 3 * 32 * 32));
        Rng(1).fill_uniform(v.data(), v.size(), 0.f, 1.f);
        x = Tensor::from_vector(v, {kN, 3, 32, 32});
        labels = Tensor::from_labels(host_labels);
    }
};

}  // namespace

TEST_CASE("bench flops: PreAct ResNet-18 steps count what the engine computes", "[bench]") {
    Fixture f;
    const double fwd = 2 * kN * kPreActMacs, stem = 2 * kN * kStemMacs;
    REQUIRE(fwd == 2.0 * kN * 555422720);  // the well-known 0.56 GMAC per CIFAR image

    SECTION("training step: no data gradient for the images") {
        nn::SGD opt(f.model->parameters(), {0.01f, 0.9f, 0.f, 0.f, false});
        const cw_bench::StepFlops c = cw_bench::count_flops([&] {
            f.model->train();
            opt.zero_grad();
            cross_entropy((*f.model)(f.x), f.labels).backward();
            opt.step();
        });
        CHECK(c.forward == fwd);
        CHECK(c.backward_weights == fwd);
        CHECK(c.backward_data == fwd - stem);
    }
    SECTION("attack step: data gradients only") {
        const cw_bench::StepFlops c = cw_bench::count_flops([&] {
            f.model->eval();
            InputGradOnlyGuard attack_step;
            Tensor xa = f.x.detach().set_requires_grad(true);
            cross_entropy((*f.model)(xa), f.labels).backward();
        });
        CHECK(c.forward == fwd);
        CHECK(c.backward_data == fwd);
        CHECK(c.backward_weights == 0);
    }
    SECTION("pgd_at with K = 3: K attack steps, then one training step") {
        train::MethodOptions o;
        o.steps = 3;
        train::PgdAt method(o);
        Rng rng(2);
        const cw_bench::StepFlops c = cw_bench::count_flops([&] {
            train::BatchInput in{*f.model, f.x, f.labels, f.host_labels, 0, 0, 10, rng};
            sum(method.batch_loss(in).per_sample).backward();
        });
        CHECK(c.forward == 4 * fwd);
        CHECK(c.backward_data == 3 * fwd + (fwd - stem));
        CHECK(c.backward_weights == fwd);
        CHECK(c.scaled(64).total() == 64 * c.total());
    }
}

// The small CNN runs its convolutions as conv2d_relu (Sequential fuses each conv with its relu): they count as
// convolutions. Seen failing with only "conv2d" counted (the fc layers' FLOPs alone).
TEST_CASE("bench flops: the small CNN's fused convolutions count", "[bench]") {
    manual_seed(0);
    nn::ModelConfig cfg;
    cfg.in_channels = 1, cfg.input_size = 28;
    auto model = nn::make_model("small_cnn", cfg);
    std::vector<float> v(static_cast<size_t>(kN * 28 * 28));
    Rng(1).fill_uniform(v.data(), v.size(), 0.f, 1.f);
    const Tensor x = Tensor::from_vector(v, {kN, 1, 28, 28});
    // 28 -> 26 -> 24, pool 12 -> 10 -> 8, pool 4; then 1024 -> 200 -> 200 -> 10.
    const double macs = 26.0 * 26 * 32 * 1 * 9 + 24.0 * 24 * 32 * 32 * 9 + 10.0 * 10 * 64 * 32 * 9 +
                        8.0 * 8 * 64 * 64 * 9 + 1024.0 * 200 + 200.0 * 200 + 200.0 * 10;
    const cw_bench::StepFlops c = cw_bench::count_flops([&] {
        model->eval();
        InputGradOnlyGuard attack_step;
        Tensor xa = x.detach().set_requires_grad(true);
        cross_entropy((*model)(xa), Tensor::from_labels({3, 7})).backward();
    });
    CHECK(c.forward == 2 * kN * macs);
    CHECK(c.backward_data == 2 * kN * macs);
}
