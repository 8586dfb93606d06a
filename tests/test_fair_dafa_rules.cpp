// DAFA's and TRIX's rules at their edges (docs/protocols/dafa.md §5.6, trix.md §2-§3), each computed by hand: a
// class weight driven below 0 gives that class no ball at all; TRIX's split is strict, so weights equal to the
// batch mean (a one-class batch, equal weights) leave every sample untargeted; a sample aimed at class 0 counts as
// targeted; and the defaults the protocol pages state are the ones the options and --help carry.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/ops.h"
#include "fairness/methods/dafa.h"
#include "fairness/methods/dafa_weights.h"
#include "fairness/methods/trix.h"
#include "jobs/registry.h"
#include "nn/layers.h"
#include "tests/test_train_methods_util.h"
#include "train/methods/method_util.h"
#include "util/flags.h"

using namespace cw;
using namespace cw::train;

namespace {

constexpr float kEps = 8.f / 255, kAlpha = 2.f / 255;

MethodOptions options(double lambda) {
    MethodOptions o;
    o.eps = kEps;
    o.alpha = kAlpha;
    o.steps = 3;
    o.dafa.warmup = 1;
    o.dafa.lambda = lambda;
    return o;
}

// Two classes, P = [[0.5, 0.5], [0.2, 0.8]] (p_0(0) = 0.5 < p_1(1) = 0.8: class 0 is the harder), λ = 5:
//   W_0 = 1 + λ·p_0(1)·p_1(1) = 1 + 5·0.5·0.8 = 3,   W_1 = 1 − λ·p_0(1)·p_1(1) = 1 − 2 = −1.
void negative_weight_warmup(DafaSchedule& s) {
    s.ensure_classes(2);
    s.record(0, {0.5f, 0.5f, 0.2f, 0.8f}, {0, 1});
    s.end_epoch(0);
}

// The largest |x' − x| over the rows of class `k`.
float largest_move(const Tensor& xa, const Tensor& x, const std::vector<int32_t>& y, int32_t k) {
    const std::vector<float> a = xa.to_vector(), b = x.to_vector();
    const size_t per = a.size() / y.size();
    float m = 0;
    for (size_t n = 0; n < y.size(); ++n)
        if (y[n] == k)
            for (size_t j = 0; j < per; ++j) m = std::max(m, std::fabs(a[n * per + j] - b[n * per + j]));
    return m;
}

}  // namespace

// Seen failing with max(W, 0) dropped from radius_scale (DAFA's ε_k, the class state's eps: −ε) and, separately,
// from sample_radius_scale (TRIX's attack: class 1's scale read −1 and its x' moved away from x).
TEST_CASE("dafa and trix: a class weight below 0 gives that class radius and step 0, so x' = x", "[fair][dafa][trix]") {
    cw_train_test::QuietAttacks quiet;
    Dafa dafa(options(5.0));
    negative_weight_warmup(dafa.schedule());
    dafa.refresh();
    const auto state = dafa.class_state();
    CHECK(state[0][0] == Approx(3.0).epsilon(1e-6));
    CHECK(state[0][1] == Approx(-1.0).epsilon(1e-6));
    CHECK(state[1][0] == Approx(3.0 * kEps).epsilon(1e-6));
    CHECK(state[1][1] == 0.0);
    CHECK(dafa.schedule().sample_radius_scale({1, 0, 1}) == std::vector<float>{0.f, 3.f, 0.f});
    CHECK(dafa.schedule().sample_weights({1, 0})[0] == Approx(-1.0));   // the loss weight stays W itself (code)

    Rng init(3), draws(5);
    auto net = cw_train_test::tiny_net(init, 2);
    std::vector<float> pixels(4 * 3 * 8 * 8);
    for (float& v : pixels) v = draws.uniform(0.2f, 0.8f);
    const Tensor x = Tensor::from_vector(pixels, {4, 3, 8, 8});
    const std::vector<int32_t> y{0, 1, 0, 1};
    const Tensor start = noisy_start(x, 0.001f, draws);

    const Tensor xa = dafa.adversarial(*net, x, start, y);
    CHECK(largest_move(xa, x, y, 1) == 0.f);
    CHECK(largest_move(xa, x, y, 0) > kEps);               // class 0 moved, beyond the plain ε (its ball is 3ε)
    CHECK(largest_move(xa, x, y, 0) <= 3 * kEps + 1e-6f);

    Trix trix(options(5.0));
    negative_weight_warmup(trix.schedule());
    const Tensor xt = trix.adversarial(*net, x, start, {-1, -1, -1, -1}, y);
    CHECK(largest_move(xt, x, y, 1) == 0.f);
    CHECK(largest_move(xt, x, y, 0) > kEps);
}

// Seen failing with the split's `<` made `<=`: every sample of both cases was targeted.
TEST_CASE("trix: a weight equal to the batch mean is not targeted (one-class batch, equal weights)", "[fair][trix]") {
    // One class in the batch: its row is the mean probability, the absent classes' rows are 0 with 1e-8 on the
    // diagonal, so every j ≠ 1 subtracts p_j(1)·p_1(1) = 0: W_1 = 1 exactly, which is the batch mean.
    const std::vector<float> probs{0.2f, 0.7f, 0.1f, 0.1f, 0.8f, 0.1f, 0.3f, 0.6f, 0.1f};
    const std::vector<double> w = trix_batch_weights(probs, {1, 1, 1}, 3, 1.0);
    CHECK(w[1] == 1.0);
    CHECK(trix_targeted(w, {1, 1, 1}) == std::vector<uint8_t>{0, 0, 0});
    // Equal weights (0.75 is exact in binary, so the mean is exactly 0.75 too): nobody is below the mean.
    CHECK(trix_targeted({0.75, 0.75, 0.75}, {0, 1, 2, 0}) == std::vector<uint8_t>{0, 0, 0, 0});
}

// Seen failing with the count's `t >= 0` made `t > 0` (class 1's share read 0).
TEST_CASE("trix: a sample aimed at class 0 counts as targeted in the per-class state", "[fair][trix]") {
    cw_train_test::QuietAttacks quiet;
    // A linear model with weights 0 and biases (0, 2): every sample's clean probabilities are (q, 1 − q), q =
    // 1/(1 + e²) ≈ 0.119. Class 0's self-probability q is below class 1's 1 − q, so V_0 = 1 + (1 − q)² ≈ 1.78 and
    // V_1 = 1 − (1 − q)² ≈ 0.22, mean 1 over two samples of each: class 1 is targeted, and with two classes its
    // only possible target is class 0.
    Rng rng(9);
    auto net = std::make_shared<nn::Sequential>();
    net->add("flat", std::make_shared<nn::Flatten>());
    net->add("fc", std::make_shared<nn::Linear>(4, 2, true, rng));
    for (auto& p : net->named_parameters())
        p.tensor->copy_from(p.name == "fc.bias" ? Tensor::from_vector({0.f, 2.f}, {2}) : Tensor::zeros(p.tensor->shape()));
    const Tensor x = Tensor::from_vector(std::vector<float>(16, 0.5f), {4, 1, 2, 2});
    const std::vector<int32_t> host_y{0, 1, 0, 1};
    const Tensor y = Tensor::from_labels(host_y);

    Trix trix(options(1.0));
    const std::vector<int32_t> t = trix.targets(*net, x, host_y, 2, rng);
    CHECK(t == std::vector<int32_t>{-1, 0, -1, 0});
    net->train();
    Rng step(4);
    BatchInput in{*net, x, y, host_y, 0, 0, 2, step};
    trix.batch_loss(in);
    const auto state = trix.class_state();
    CHECK(state[3] == std::vector<double>{0.0, 1.0});
}

// Seen failing with DafaOptions' warm-up set to 71, λ to 1.5 and the ties to paper (each alone), and with the
// --dafa-warmup help's default changed to 60.
TEST_CASE("dafa and trix: the defaults are the codes', in the options and in --help", "[fair][dafa][trix]") {
    const DafaOptions d;
    CHECK(d.warmup == 70);   // dafa.md §4, trix.md §3: both codes' τ
    CHECK(d.lambda == 1.0);  // the codes' default, the CIFAR-10 value
    CHECK(d.ties == DafaTies::Code);
    CHECK(d.trix_mixed);

    MethodOptions o;
    cli::FlagSet app("test");
    add_method_flags(app, o);
    std::string help = app.help();
    for (char& c : help)
        if (c == '\n') c = ' ';
    std::string flat;   // the help wraps lines and indents them: one space between words
    for (char c : help)
        if (c != ' ' || (!flat.empty() && flat.back() != ' ')) flat += c;
    CHECK_THAT(flat, Catch::Contains("(default 70, both codes;"));
    CHECK_THAT(flat, Catch::Contains("(default 1.0, code and the paper's CIFAR-10;"));
    CHECK_THAT(flat, Catch::Contains("default code"));
    CHECK(flat.find("--trix-lambda") == std::string::npos);   // the split is the same for every λ > 0
}
