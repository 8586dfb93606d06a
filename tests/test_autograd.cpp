// The tape: accumulation, grad modes, several forwards into one loss, hooks, inspection, freeing, errors.
#include <sstream>

#include "tests/skip.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw_test;

TEST_CASE("backward accumulates into leaves across calls", "[autograd]") {
    auto x = Tensor::from_vector({1.f, -2.f, 3.f}, {3}).set_requires_grad(true);
    sum(square(x)).backward();
    require_close(x.grad().to_vector(), {2.f, -4.f, 6.f});
    sum(square(x)).backward();
    require_close(x.grad().to_vector(), {4.f, -8.f, 12.f});
    x.zero_grad();
    REQUIRE_FALSE(x.grad().defined());
}

TEST_CASE("a tensor used twice receives both contributions", "[autograd]") {
    auto x = Tensor::from_vector({2.f, 3.f}, {2}).set_requires_grad(true);
    auto y = mul(x, x);               // d/dx = 2x, via two edges into the same leaf
    sum(add(y, x)).backward();        // + 1
    require_close(x.grad().to_vector(), {5.f, 7.f});
}

// An add hands its gradient to both inputs as one shared buffer (no copy); a later contribution to one of them must
// not write into the buffer the other still reads.
TEST_CASE("a gradient shared by both inputs of an add is never written in place", "[autograd]") {
    auto x = Tensor::from_vector({1.f, 2.f}, {2}).set_requires_grad(true);
    SECTION("the other input's backward runs after the accumulation") {
        Tensor y = mul(x, 2.f), w = mul(x, 3.f);
        Tensor z = add(y, w);                    // dz/dy = dz/dw = 1, one buffer
        Tensor loss = add(sum(z), sum(mul(y, 5.f)));  // y's second contribution, 5
        loss.backward();
        // d/dx = 2 (1 + 5) + 3 * 1; writing the 5 into the shared buffer would give 2 * 6 + 3 * 6 = 30.
        require_close(x.grad().to_vector(), {15.f, 15.f});
    }
    SECTION("one tensor on both sides") {
        Tensor y = mul(x, 2.f);
        Tensor z = add(y, y).retain_grad();
        sum(z).backward();
        require_close(x.grad().to_vector(), {4.f, 4.f});
        require_close(z.grad().to_vector(), {1.f, 1.f});  // the add's own (retained) gradient untouched
    }
    SECTION("retained inputs get buffers of their own, which the user may write") {
        Tensor y = mul(x, 2.f).retain_grad(), w = mul(x, 3.f).retain_grad();
        sum(add(y, w)).backward();
        Tensor gy = y.grad();
        gy.fill_(7.f);
        require_close(w.grad().to_vector(), {1.f, 1.f});
    }
}

TEST_CASE("several forward passes feed one loss (TRADES shape)", "[autograd]") {
    auto w = randn({3, 4}, 1).mark_parameter();
    auto x_clean = randn({2, 4}, 2, 1.f, false);
    auto x_adv = randn({2, 4}, 3, 1.f, false);
    auto labels = Tensor::from_labels({0, 2});
    Tensor clean = linear(x_clean, w), adv = linear(x_adv, w);
    Tensor loss = add(cross_entropy(clean, labels), mul(kl_div(clean, adv), 6.f));
    loss.backward();
    auto both = w.grad().to_vector();
    // The same gradient, term by term.
    w.zero_grad();
    cross_entropy(linear(x_clean, w), labels).backward();
    auto g1 = w.grad().to_vector();
    w.zero_grad();
    mul(kl_div(linear(x_clean, w), linear(x_adv, w)), 6.f).backward();
    auto g2 = w.grad().to_vector();
    for (size_t i = 0; i < both.size(); ++i) REQUIRE(both[i] == Approx(g1[i] + g2[i]).margin(1e-6));
}

TEST_CASE("InputGradOnly: gradients reach the input, never the parameters", "[autograd]") {
    auto w = randn({4, 3, 3, 3}, 4).mark_parameter();
    auto b = randn({4}, 5).mark_parameter();
    auto x = randn({2, 3, 5, 5}, 6);
    {
        InputGradOnlyGuard attack_step;
        REQUIRE_FALSE(needs_grad(w));
        Tensor y = conv2d(x, w, b, 1, 1);
        sum(y).backward();
    }
    REQUIRE(x.grad().defined());
    REQUIRE_FALSE(w.grad().defined());
    REQUIRE_FALSE(b.grad().defined());
    // outside the scope the parameters learn again
    sum(conv2d(x, w, b, 1, 1)).backward();
    REQUIRE(w.grad().defined());
}

TEST_CASE("NoGrad records nothing", "[autograd]") {
    auto x = randn({3}, 7);
    Tensor y;
    {
        NoGradGuard ng;
        y = mul(x, 2.f);
    }
    REQUIRE_FALSE(y.requires_grad());
    REQUIRE(y.is_leaf());
    REQUIRE_THROWS_AS(sum(y).backward(), AutogradError);
}

TEST_CASE("per-sample loss weights scale each sample's gradient", "[autograd]") {
    auto logits = randn({3, 4}, 8);
    auto labels = Tensor::from_labels({1, 3, 0});
    auto w = Tensor::from_vector({1.f, 0.f, 2.f}, {3});
    cross_entropy(logits, labels, {0.f, w, Reduction::Sum}).backward();
    auto weighted = logits.grad().to_vector();
    logits.zero_grad();
    cross_entropy(logits, labels, {0.f, {}, Reduction::Sum}).backward();
    auto plain = logits.grad().to_vector();
    const float wv[3] = {1.f, 0.f, 2.f};
    for (int i = 0; i < 12; ++i) REQUIRE(weighted[i] == Approx(plain[i] * wv[i / 4]).margin(1e-7));
    // Mean divides the weighted sum by the batch size
    auto loss_mean = cross_entropy(logits, labels, {0.f, w, Reduction::Mean}).item();
    auto loss_sum = cross_entropy(logits, labels, {0.f, w, Reduction::Sum}).item();
    REQUIRE(loss_mean == Approx(loss_sum / 3));
}

TEST_CASE("the graph is freed after backward unless retained", "[autograd]") {
    auto x = randn({4}, 9);
    Tensor loss = sum(cw::exp(x));
    loss.backward(true);
    loss.backward();  // retained once: runs again and accumulates
    require_close(x.grad().to_vector(), mul(cw::exp(x.detach()), 2.f).to_vector(), 1e-5);
    REQUIRE_THROWS_WITH(loss.backward(), Catch::Contains("already freed"));
    // intermediate gradients are dropped, unless retained
    auto a = randn({3}, 10);
    Tensor mid = mul(a, 3.f);
    Tensor kept = mul(a, 2.f).retain_grad();
    sum(add(square(mid), kept)).backward();
    REQUIRE_FALSE(mid.grad().defined());
    require_close(kept.grad().to_vector(), {1.f, 1.f, 1.f});
}

TEST_CASE("backward from a non-scalar is an error naming the shape", "[autograd][errors]") {
    auto x = randn({2, 3}, 11);
    REQUIRE_THROWS_WITH(mul(x, 2.f).backward(), Catch::Contains("scalar") && Catch::Contains("[2, 3]"));
}

TEST_CASE("gradient hooks: inspect, clip, NaN check", "[autograd]") {
    auto x = Tensor::from_vector({3.f, 4.f}, {2}).set_requires_grad(true);
    Tensor mid = mul(x, 10.f);
    double seen = -1;
    mid.register_hook([&](Tensor& g) { seen = tensor_l2_norm(g); });
    mid.register_hook(clip_grad_hook(1.f));  // the upstream gradient (3,4)*2 has norm 10 -> rescaled to norm 1
    sum(square(mul(x, 1.f)) + mul(mid, 0.f) + mid).backward();
    REQUIRE(seen == Approx(std::sqrt(2.0)));
    // d/dx: 2x from the square, plus 10 * clipped(1,1)/sqrt2
    const float c = 10.f / std::sqrt(2.f);
    require_close(x.grad().to_vector(), {6.f + c, 8.f + c}, 1e-5);

    auto y = Tensor::from_vector({0.f, 1.f}, {2}).set_requires_grad(true);
    Tensor bad = cw::log(y);  // d/dy log(y) at 0 is inf
    bad.register_hook(nan_check_hook("log output"));
    y.register_hook(nan_check_hook("y"));
    REQUIRE_THROWS_WITH(sum(bad).backward(), Catch::Contains("non-finite gradient for y"));
}

TEST_CASE("the tape can be printed with shapes and gradient norms", "[autograd]") {
    auto w = randn({3, 4}, 12).mark_parameter();
    auto x = randn({2, 4}, 13, 1.f, false);
    TapeRecorder tape;
    Tensor loss = cross_entropy(relu(linear(x, w)), Tensor::from_labels({0, 1}));
    std::ostringstream before;
    print_graph(loss, before);
    REQUIRE_THAT(before.str(), Catch::Contains("linear([2, 4], [3, 4], [])") && Catch::Contains("relu([2, 3]) -> [2, 3]"));
    loss.backward();
    REQUIRE(tape.entries().size() == 5);  // linear, relu, cross_entropy, then mean = sum + mul_scalar
    std::ostringstream after;
    tape.print(after);
    REQUIRE_THAT(after.str(), Catch::Contains("linear") && Catch::Contains("cross_entropy"));
    REQUIRE(tape.entries()[0].grad_out_norm > 0);
    REQUIRE(tape.entries()[0].grad_in_norms.size() == 3);
    REQUIRE(tape.entries()[0].grad_in_norms[0] == -1);  // x needs no gradient
    REQUIRE(tape.entries()[0].grad_in_norms[1] == Approx(tensor_l2_norm(w.grad())));
}

TEST_CASE("shape errors name the op and both shapes; no silent broadcast", "[errors]") {
    auto a = randn({2, 3}, 14), b = randn({3, 2}, 15), c = randn({3}, 16);
    REQUIRE_THROWS_WITH(add(a, b), Catch::Contains("add") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
    REQUIRE_THROWS_AS(mul(a, c), ShapeError);  // different rank: never right-aligned silently
    REQUIRE_THROWS_WITH(matmul(a, a), Catch::Contains("matmul"));
    REQUIRE_THROWS_WITH(conv2d(randn({1, 3, 4, 4}, 17), randn({2, 4, 3, 3}, 18)), Catch::Contains("conv2d") && Catch::Contains("channels"));
    REQUIRE_THROWS_WITH(cross_entropy(randn({2, 3}, 19), Tensor::from_labels({0, 3})), Catch::Contains("label 3"));
    REQUIRE_THROWS_WITH(cross_entropy(randn({2, 3}, 19), Tensor::from_labels({0})), Catch::Contains("cross_entropy"));
    REQUIRE_THROWS_WITH(reshape(a, {4, 2}), Catch::Contains("reshape"));
    REQUIRE_THROWS_WITH(linear(randn({2, 5}, 20), randn({3, 4}, 21)), Catch::Contains("linear"));
    REQUIRE_THROWS_WITH(gather(randn({2, 3}, 22), Tensor::from_labels({0, 5})), Catch::Contains("index 5"));
    REQUIRE_THROWS_WITH(topk(randn({2, 3}, 23), 4, 1), Catch::Contains("topk"));
    REQUIRE_THROWS_AS(Tensor::from_vector({1.f, 2.f}, {3}), ShapeError);
}

TEST_CASE("mixing devices is an error naming both devices", "[errors][cuda]") {
    CW_SKIP_WITHOUT_GPU();
    auto a = randn({2}, 24), b = randn({2}, 25).to(Device::cuda());
    REQUIRE_THROWS_WITH(add(a, b), Catch::Contains("different devices"));
}

TEST_CASE("--device values resolve or fail clearly", "[device]") {
    REQUIRE(resolve_device("cpu", false).is_cpu());
    REQUIRE_THROWS_WITH(resolve_device("gpu", false), Catch::Contains("--device") && Catch::Contains("'gpu'"));
    std::string why;
    if (!cuda_available(&why)) {
        REQUIRE(resolve_device("auto", false).is_cpu());
        REQUIRE_THROWS_WITH(resolve_device("cuda", false), Catch::Contains("--device cuda"));
    } else {
        REQUIRE(resolve_device("auto", false).is_cuda());
    }
}
