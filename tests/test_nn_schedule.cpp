// Learning-rate schedules at known points (docs/protocols/training.md §3, §6).
#include "nn/schedule.h"
#include "tests/test_nn_util.h"

using namespace cw;
using Catch::Matchers::Contains;

TEST_CASE("schedule: Rice piecewise, per iteration with fractional epochs", "[nn]") {
    nn::PiecewiseLr s(0.1, 200);
    REQUIRE(s.lr(0) == 0.1);
    REQUIRE(s.lr(99.99) == 0.1);
    REQUIRE(s.lr(100) == Approx(0.01));
    REQUIRE(s.lr(149.99) == Approx(0.01));
    REQUIRE(s.lr(150) == Approx(0.001));
    REQUIRE(s.lr(199.9) == Approx(0.001));
    // Rice evaluates after-step progress e + (i+1)/n: the LAST batch of epoch 99 already runs at 0.01.
    const int64_t n = 391;  // CIFAR-10 at batch 128
    REQUIRE(s.lr(nn::progress_after_step(99, n - 2, n)) == 0.1);
    REQUIRE(s.lr(nn::progress_after_step(99, n - 1, n)) == Approx(0.01));
    REQUIRE(nn::progress_after_step(3, 0, 4) == 3.25);
    REQUIRE(nn::progress_before_step(3, 0, 4) == 3.0);
}

TEST_CASE("schedule: multistep with absolute factors and with gamma", "[nn]") {
    nn::MultiStepLr fat(0.1, {{90, 0.01}, {60, 0.1}, {110, 0.005}});  // FAT; unsorted on purpose
    REQUIRE(fat.lr(0) == 0.1);
    REQUIRE(fat.lr(59.5) == 0.1);
    REQUIRE(fat.lr(60) == Approx(0.01));
    REQUIRE(fat.lr(95) == Approx(0.001));
    REQUIRE(fat.lr(119) == Approx(0.0005));
    nn::MultiStepLr bag(0.1, std::vector<double>{100, 105}, 0.1);  // bag-of-tricks "110" schedule
    REQUIRE(bag.lr(99) == 0.1);
    REQUIRE(bag.lr(104) == Approx(0.01));
    REQUIRE(bag.lr(105) == Approx(0.001));
}

TEST_CASE("schedule: cosine", "[nn]") {
    nn::CosineLr s(0.1, 100);
    REQUIRE(s.lr(0) == Approx(0.1));
    REQUIRE(s.lr(25) == Approx(0.1 * (1 + std::cos(M_PI / 4)) / 2));
    REQUIRE(s.lr(50) == Approx(0.05));
    REQUIRE(s.lr(100) == Approx(0.0).margin(1e-15));
    REQUIRE(s.lr(150) == Approx(0.0).margin(1e-15));
    REQUIRE(nn::CosineLr(0.1, 100, 0.001).lr(100) == Approx(0.001));
}

TEST_CASE("schedule: one cycle (Wong et al. fast AT)", "[nn]") {
    auto cifar = nn::cyclic_lr(0.2, 15);  // 0 -> 0.2 over 7.5 epochs -> 0 at 15
    REQUIRE(cifar->lr(0) == 0.0);
    REQUIRE(cifar->lr(3.75) == Approx(0.1));
    REQUIRE(cifar->lr(7.5) == Approx(0.2));
    REQUIRE(cifar->lr(11.25) == Approx(0.1));
    REQUIRE(cifar->lr(15) == 0.0);
    REQUIRE(cifar->lr(16) == 0.0);
    // torch CyclicLR(base 0, max 0.2, step_size_up = step_size_down = total/2), stepped after every iteration:
    // the k-th optimiser step (0-based) runs at 0.2 * k / step_size_up. With n = 4 batches, step_size_up = 30.
    for (int64_t k : {0, 3, 29, 30, 31, 59}) {
        const double torch_lr = k <= 30 ? 0.2 * k / 30.0 : 0.2 * (60 - k) / 30.0;
        REQUIRE(cifar->lr(nn::progress_before_step(k / 4, k % 4, 4)) == Approx(torch_lr).margin(1e-12));
    }
    auto mnist = nn::cyclic_lr(5e-3, 10, 0.4);  // MNIST: peak at 2/5 of training
    REQUIRE(mnist->lr(4) == Approx(5e-3));
    REQUIRE(mnist->lr(2) == Approx(2.5e-3));
    REQUIRE(mnist->lr(7) == Approx(2.5e-3));
}

TEST_CASE("schedule: linear warm-up wrapper, named schedules", "[nn]") {
    nn::WarmupLr warm(std::make_shared<nn::PiecewiseLr>(0.1, 100), 5);
    REQUIRE(warm.lr(0) == 0.0);
    REQUIRE(warm.lr(2.5) == Approx(0.05));
    REQUIRE(warm.lr(5) == Approx(0.1));
    REQUIRE(warm.lr(60) == Approx(0.01));
    REQUIRE(nn::WarmupLr(std::make_shared<nn::ConstantLr>(0.1), 5, 0.1).lr(0) == Approx(0.01));

    REQUIRE(nn::make_lr_schedule("piecewise", 0.1, 200)->lr(120) == Approx(0.01));
    REQUIRE(nn::make_lr_schedule("cyclic", 0.2, 15)->lr(7.5) == Approx(0.2));
    REQUIRE(nn::make_lr_schedule("multistep", 0.1, 120, {75, 90}, 0.1)->lr(80) == Approx(0.01));
    REQUIRE(nn::make_lr_schedule("cosine", 0.1, 10)->lr(5) == Approx(0.05));
    REQUIRE(nn::make_lr_schedule("constant", 0.1, 10)->lr(5) == 0.1);
    REQUIRE_THAT(cw_nn_test::error_of<Error>([] { nn::make_lr_schedule("step", 0.1, 10); }),
                 Contains("unknown lr schedule 'step'") && Contains("piecewise"));
    REQUIRE_THROWS_AS(nn::make_lr_schedule("multistep", 0.1, 10), Error);
}
