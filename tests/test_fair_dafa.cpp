// DAFA and TRIX (docs/protocols/dafa.md, trix.md), rule by rule with hand-worked numbers: the class similarity, the
// weight rule and its tie rule, TRIX's per-batch weights and strong/weak split, the warm-up switch, the per-class
// radius and step, the weighted clean CE; then through train::Trainer: history.csv state rows, and a run
// interrupted in the warm-up's recording epoch or after the switch that resumes bit-identical.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <sstream>

#include "datasets/loader.h"
#include "engine/ops.h"
#include "fairness/methods/dafa.h"
#include "fairness/methods/dafa_weights.h"
#include "fairness/methods/trix.h"
#include "tests/test_nn_util.h"
#include "tests/test_band_trainer.h"
#include "tests/test_train_methods_util.h"
#include "train/methods/method_util.h"
#include "jobs/registry.h"
#include "train/trainer.h"

using namespace cw;
using namespace cw::train;

namespace {

// P = [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.05, 0.05, 0.9]], self-probabilities 0.6 < 0.7 < 0.9:
//   W_0 = 1 + p0(1)·p1(1) + p0(2)·p2(2)            = 1 + 0.3·0.7 + 0.1·0.9     = 1.30   (the hardest gains)
//   W_1 = 1 − p0(1)·p1(1) + p1(2)·p2(2)            = 1 − 0.21 + 0.1·0.9        = 0.88
//   W_2 = 1 − p0(2)·p2(2) − p1(2)·p2(2)            = 1 − 0.09 − 0.09           = 0.82   (the easiest gives)
// Each pair moves p_hard(easy)·p_easy(easy) from the easier to the harder class: Σ W stays C.
const std::vector<double> kSimilarity{0.6, 0.3, 0.1, 0.2, 0.7, 0.1, 0.05, 0.05, 0.9};

}  // namespace

TEST_CASE("dafa: the weight rule on a hand-worked 3-class similarity, lambda 1 and 1.5", "[fair][dafa]") {
    const std::vector<double> w = dafa_weights(kSimilarity, 3, 1.0);
    CHECK(w[0] == Approx(1.30).epsilon(1e-12));
    CHECK(w[1] == Approx(0.88).epsilon(1e-12));
    CHECK(w[2] == Approx(0.82).epsilon(1e-12));
    CHECK(w[0] + w[1] + w[2] == Approx(3.0).epsilon(1e-12));
    // λ scales every transfer: 1 + 1.5·0.30, 1 + 1.5·(−0.12), 1 + 1.5·(−0.18)
    const std::vector<double> w15 = dafa_weights(kSimilarity, 3, 1.5);
    CHECK(w15[0] == Approx(1.45).epsilon(1e-12));
    CHECK(w15[1] == Approx(0.82).epsilon(1e-12));
    CHECK(w15[2] == Approx(0.73).epsilon(1e-12));
    CHECK(dafa_weights(kSimilarity, 3, 0.0) == std::vector<double>(3, 1.0));
    CHECK_THROWS_WITH(dafa_weights(kSimilarity, 4, 1.0), Catch::Contains("for 4 classes"));
}

TEST_CASE("dafa: equal self-probabilities follow the code's else branch, or the paper's no-op with --dafa-ties paper",
          "[fair][dafa]") {
    // p0(0) = p1(1) = 0.6: the code's else branch subtracts for both, W_0 = 1 − p1(0)·0.6, W_1 = 1 − p0(1)·0.6;
    // the paper's Algorithm 2 has no branch for equality. Class 2 (0.9) is easier than both in either rule.
    const std::vector<double> p{0.6, 0.3, 0.1, 0.2, 0.6, 0.2, 0.05, 0.05, 0.9};
    const std::vector<double> code = dafa_weights(p, 3, 1.0, DafaTies::Code);
    const std::vector<double> paper = dafa_weights(p, 3, 1.0, DafaTies::Paper);
    // the pair with class 2: W_0 += p0(2)·0.9 = 0.09, W_1 += p1(2)·0.9 = 0.18, W_2 −= 0.09 + 0.18
    CHECK(code[0] == Approx(1 - 0.2 * 0.6 + 0.09).epsilon(1e-12));
    CHECK(code[1] == Approx(1 - 0.3 * 0.6 + 0.18).epsilon(1e-12));
    CHECK(paper[0] == Approx(1 + 0.09).epsilon(1e-12));
    CHECK(paper[1] == Approx(1 + 0.18).epsilon(1e-12));
    CHECK(code[2] == Approx(1 - 0.27).epsilon(1e-12));
    CHECK(paper[2] == Approx(1 - 0.27).epsilon(1e-12));
}

TEST_CASE("dafa: the class similarity is the mean probability row of each class's samples", "[fair][dafa]") {
    // labels 0, 1, 0, 1 (class 2 never seen): P0 = mean([0.5,0.3,0.2], [0.7,0.1,0.2]) = [0.6, 0.2, 0.2]
    const std::vector<float> probs{0.5f, 0.3f, 0.2f, 0.1f, 0.8f, 0.1f, 0.7f, 0.1f, 0.2f, 0.3f, 0.6f, 0.1f};
    const std::vector<int32_t> labels{0, 1, 0, 1};
    std::vector<double> sums(9, 0.0);
    std::vector<int64_t> counts(3, 0);
    accumulate_class_probs(probs, labels, 3, sums, counts);
    CHECK(counts == std::vector<int64_t>{2, 2, 0});
    const std::vector<double> p = class_similarity(sums, counts);
    const std::vector<double> want{0.6, 0.2, 0.2, 0.2, 0.7, 0.1, 0, 0, 0};
    for (size_t i = 0; i < 9; ++i) CHECK(p[i] == Approx(want[i]).margin(1e-7));
    CHECK_THROWS_WITH(accumulate_class_probs(probs, {0, 1, 0, 3}, 3, sums, counts), Catch::Contains("label 3"));
}

TEST_CASE("trix: the per-batch weights with an absent class, and the split against the mean sample weight",
          "[fair][trix]") {
    // labels 0, 0, 1 (class 2 absent): P0 = [0.7, 0.2, 0.1], P1 = [0.3, 0.6, 0.1], P2 = 0 with 1e-8 on the diagonal.
    //   W_0 = 1 − p1(0)·p0(0) = 1 − 0.3·0.7 = 0.79;  W_1 = 1 + p1(0)·p0(0) = 1.21;  W_2 = 1 (its row is 0)
    const std::vector<float> probs{0.6f, 0.3f, 0.1f, 0.8f, 0.1f, 0.1f, 0.3f, 0.6f, 0.1f};
    const std::vector<double> w = trix_batch_weights(probs, {0, 0, 1}, 3, 1.0);
    CHECK(w[0] == Approx(0.79).epsilon(1e-6));
    CHECK(w[1] == Approx(1.21).epsilon(1e-6));
    CHECK(w[2] == Approx(1.0).epsilon(1e-12));
    // mean sample weight (0.79 + 0.79 + 1.21)/3 = 0.93: the two class-0 samples are the strong ones, targeted
    CHECK(trix_targeted(w, {0, 0, 1}) == std::vector<uint8_t>{1, 1, 0});
    // The mean is over SAMPLES (the code's tar_weights_mask.mean()), not classes: W = (1.05, 1.23, 0.72) and
    // labels 1,1,1,1,0,2 give a sample mean (4·1.23 + 1.05 + 0.72)/6 = 1.115, so class 0 (1.05) is targeted,
    // though it is above the class mean 1.0.
    CHECK(trix_targeted({1.05, 1.23, 0.72}, {1, 1, 1, 1, 0, 2}) == std::vector<uint8_t>{0, 0, 0, 0, 1, 1});
}

TEST_CASE("dafa: the warm-up switch records only the last warm-up epoch and computes the weights once",
          "[fair][dafa]") {
    DafaOptions o;
    o.warmup = 2;   // epochs 0 and 1 plain TRADES; the weights from epoch 1's probabilities, used from epoch 2
    DafaSchedule s(o, "test");
    s.ensure_classes(3);
    const std::vector<int32_t> labels{0, 1, 2, 0, 1, 2, 1, 0};
    // P0 = mean of rows 0, 3, 7 = [0.6, 0.8/3, 0.4/3]; P1 = rows 1, 4, 6 = [0.2, 2/3, 0.4/3]; P2 = rows 2, 5 = [0.15, 0.1, 0.75]
    //   W_0 = 1 + (0.8/3)(2/3) + (0.4/3)(0.75) = 1 + 8/45 + 0.1 = 23/18;  W_1 = 1 − 8/45 + 0.1 = 83/90;  W_2 = 1 − 0.1 − 0.1 = 0.8
    const std::vector<float> probs{0.5f, 0.3f, 0.2f, 0.1f, 0.8f, 0.1f, 0.2f, 0.1f, 0.7f, 0.7f, 0.2f, 0.1f,
                                   0.2f, 0.6f, 0.2f, 0.1f, 0.1f, 0.8f, 0.3f, 0.6f, 0.1f, 0.6f, 0.3f, 0.1f};
    const std::vector<float> other(24, 1.f / 3);
    CHECK_FALSE(s.recording(0));
    CHECK(s.recording(1));
    s.record(0, other, labels);   // epoch 0: not recorded
    s.end_epoch(0);
    CHECK_FALSE(s.active());
    CHECK(s.weights() == std::vector<double>(3, 1.0));
    CHECK(s.sample_weights(labels) == std::vector<float>(8, 1.f));
    s.record(1, probs, labels);
    s.end_epoch(1);
    REQUIRE(s.active());
    CHECK(s.weights()[0] == Approx(23.0 / 18).epsilon(1e-6));
    CHECK(s.weights()[1] == Approx(83.0 / 90).epsilon(1e-6));
    CHECK(s.weights()[2] == Approx(0.8).epsilon(1e-6));
    CHECK(s.self_probability()[2] == Approx(0.75).epsilon(1e-6));
    const std::vector<double> once = s.weights();
    s.record(2, other, labels);   // after the switch nothing is recorded, nothing recomputed
    s.end_epoch(2);
    CHECK(s.weights() == once);
    CHECK_THROWS_WITH(DafaSchedule(DafaOptions{0}, "dafa"), Catch::Contains("--dafa-warmup must be >= 1"));
}

namespace {

// Class c's images: channel c brighter, all pixels inside [0.2, 0.8] (no [0, 1] clipping in one step).
Tensor class_images(const std::vector<int32_t>& y, Rng& rng) {
    std::vector<float> v;
    for (int32_t k : y)
        for (int c = 0; c < 3; ++c)
            for (int p = 0; p < 64; ++p) v.push_back(0.35f + (c == k ? 0.3f : 0.f) + rng.uniform(-0.1f, 0.1f));
    return Tensor::from_vector(v, {static_cast<int64_t>(y.size()), 3, 8, 8});
}

// max over pixels of |a − b| for sample n
float sample_linf(const Tensor& a, const Tensor& b, int64_t n) {
    const std::vector<float> av = a.to_vector(), bv = b.to_vector();
    const int64_t dim = a.numel() / a.size(0);
    float m = 0;
    for (int64_t i = n * dim; i < (n + 1) * dim; ++i) m = std::max(m, std::fabs(av[i] - bv[i]));
    return m;
}

// A DAFA whose warm-up ended on the hand-worked probabilities above (W = 23/18, 83/90, 0.8).
std::unique_ptr<Dafa> switched_dafa(MethodOptions o) {
    o.dafa.warmup = 1;
    auto d = std::make_unique<Dafa>(o);
    DafaSchedule& s = d->schedule();
    s.ensure_classes(3);
    const std::vector<float> probs{0.5f, 0.3f, 0.2f, 0.1f, 0.8f, 0.1f, 0.2f, 0.1f, 0.7f, 0.7f, 0.2f, 0.1f,
                                   0.2f, 0.6f, 0.2f, 0.1f, 0.1f, 0.8f, 0.3f, 0.6f, 0.1f, 0.6f, 0.3f, 0.1f};
    s.record(0, probs, {0, 1, 2, 0, 1, 2, 1, 0});
    s.end_epoch(0);
    d->refresh();
    return d;
}

}  // namespace

TEST_CASE("dafa: after the switch each sample's step is W_y*alpha and its radius W_y*eps", "[fair][dafa]") {
    cw_train_test::QuietAttacks quiet;
    Rng init(3), data(4);
    auto net = cw_train_test::tiny_net(init);
    const std::vector<int32_t> y{0, 1, 2, 0, 1, 2};
    const Tensor x = class_images(y, data);
    MethodOptions o;
    o.eps = 8.f / 255;
    o.alpha = 2.f / 255;
    o.steps = 1;
    auto dafa = switched_dafa(o);
    const std::vector<double>& w = dafa->schedule().weights();
    // one step from x itself plus 1e-3 offsets (the KL gradient is 0 at x): |x' − start| = W_y·α on every pixel
    // whose gradient is not 0, and the largest such pixel shows it
    Rng start_rng(5);
    const Tensor start = noisy_start(x, 1e-3f, start_rng);
    const Tensor one = dafa->adversarial(*net, x, start, y);
    for (int64_t n = 0; n < 6; ++n) {
        INFO("sample " << n << ", class " << y[n]);
        CHECK(sample_linf(one, start, n) == Approx(static_cast<float>(w[y[n]]) * o.alpha).epsilon(1e-4));
    }
    // many steps: the ball's edge, W_y·ε, is reached and never passed
    MethodOptions many = o;
    many.steps = 10;
    auto dafa10 = switched_dafa(many);
    const Tensor far = dafa10->adversarial(*net, x, start, y);
    for (int64_t n = 0; n < 6; ++n) {
        INFO("sample " << n << ", class " << y[n]);
        CHECK(sample_linf(far, x, n) == Approx(static_cast<float>(w[y[n]]) * o.eps).epsilon(1e-4));
    }
    // state rows: weight, eps = W·ε, self-probability
    const auto state = dafa->class_state();
    REQUIRE(state.size() == 3);
    CHECK(state[1][2] == Approx(0.8 * o.eps).epsilon(1e-6));
}

TEST_CASE("dafa: the clean CE carries W_y, the KL term does not", "[fair][dafa]") {
    Rng init(3), data(4);
    auto net = cw_train_test::tiny_net(init);
    const std::vector<int32_t> y{0, 1, 2, 2};
    const Tensor x = class_images(y, data), labels = Tensor::from_labels(y);
    const std::vector<float> w{1.3f, 0.9f, 0.8f, 0.8f};
    // x' = x: KL = 0 and every term is W_y·CE_i/B
    net->train();
    const std::vector<float> ce = cross_entropy((*net)(x), labels, {0.f, Tensor(), Reduction::None}).to_vector();
    const std::vector<float> same = dafa_outer_loss(*net, x, x, labels, w, 6.f).per_sample.to_vector();
    for (size_t i = 0; i < 4; ++i) CHECK(same[i] == Approx(w[i] * ce[i] / 4).epsilon(1e-5));
    // x' ≠ x: the KL part is β·KL_i/B whatever W is: the difference of two weightings is only in the CE part
    Rng noise(8);
    const Tensor xa = noisy_start(x, 0.05f, noise);
    const std::vector<float> a = dafa_outer_loss(*net, x, xa, labels, w, 6.f).per_sample.to_vector();
    const std::vector<float> ones = dafa_outer_loss(*net, x, xa, labels, std::vector<float>(4, 1.f), 6.f).per_sample.to_vector();
    for (size_t i = 0; i < 4; ++i) CHECK(a[i] - ones[i] == Approx((w[i] - 1.f) * ce[i] / 4).margin(1e-6));
}

TEST_CASE("trix: targeted samples descend CE toward their target, the others ascend the KL", "[fair][trix]") {
    cw_train_test::QuietAttacks quiet;
    Rng init(3), data(4);
    auto net = cw_train_test::tiny_net(init);
    const std::vector<int32_t> y{0, 1, 2, 0, 1, 2};
    const Tensor x = class_images(y, data);
    MethodOptions o;
    o.eps = 16.f / 255;
    o.alpha = 4.f / 255;
    o.steps = 5;
    Trix trix(o);
    trix.schedule().ensure_classes(3);
    Rng start_rng(5);
    const Tensor start = noisy_start(x, 1e-3f, start_rng);
    const std::vector<int32_t> targets{1, -1, 0, 2, -1, -1};
    const Tensor xa = trix.adversarial(*net, x, start, targets, y);
    net->eval();
    const Tensor clean = (*net)(x), at_start = (*net)(start), at_end = (*net)(xa);
    std::vector<int32_t> goal = y;
    for (size_t n = 0; n < 6; ++n)
        if (targets[n] >= 0) goal[n] = targets[n];
    const Tensor g = Tensor::from_labels(goal);
    const std::vector<float> ce0 = cross_entropy(at_start, g, {0.f, Tensor(), Reduction::None}).to_vector();
    const std::vector<float> ce1 = cross_entropy(at_end, g, {0.f, Tensor(), Reduction::None}).to_vector();
    const std::vector<float> kl0 = kl_div(clean, at_start, Reduction::None).to_vector();
    const std::vector<float> kl1 = kl_div(clean, at_end, Reduction::None).to_vector();
    for (size_t n = 0; n < 6; ++n) {
        INFO("sample " << n << " target " << targets[n]);
        if (targets[n] >= 0)
            CHECK(ce1[n] < ce0[n]);
        else
            CHECK(kl1[n] > kl0[n]);
    }
}

namespace {

// 3 epochs of 6 steps on the band data; warm-up 2: epoch 1 records, epoch 2 trains with the weights.
cw_train_test::BandRun run_dafa_trainer(const std::string& name, const std::string& out, int64_t interrupt_after = -1,
                                        bool resume = false) {
    return cw_train_test::run_band_trainer(name, out, [&](MethodOptions& o, TrainerConfig& config) {
        o.dafa.warmup = 2;
        config.recipe.schedule = "cosine";
        config.audit_steps = 1;
        config.interrupt_after_steps = interrupt_after;
        config.resume = resume;
    });
}


}  // namespace

TEST_CASE("dafa and trix through train::Trainer: weights 1 through the warm-up, DAFA's after it, in history.csv and "
          "steps.csv", "[fair][dafa][trix]") {
    cw_train_test::QuietAttacks quiet;
    for (const std::string name : {"dafa", "trix"}) {
        DYNAMIC_SECTION(name) {
            cw_nn_test::ScratchDir dir;
            cw_train_test::BandRun r = run_dafa_trainer(name, dir.path.string());
            const std::string history = cw_train_test::file_text(dir.path / "history.csv");
            INFO(history);
            // row E holds the state after E epochs: the weights are computed at the end of epoch 2 (1-based)
            CHECK(cw_train_test::history_row(history, 1, "state_weight", 3) == std::vector<double>(3, 1.0));
            const std::vector<double> w = cw_train_test::history_row(history, 2, "state_weight", 3);
            CHECK(w != std::vector<double>(3, 1.0));
            CHECK(w[0] + w[1] + w[2] == Approx(3.0).margin(1e-4));   // pairwise transfers: Σ W = C
            CHECK(cw_train_test::history_row(history, 3, "state_weight", 3) == w);
            const std::string steps = cw_train_test::file_text(dir.path / "steps.csv");
            const std::string header = steps.substr(0, steps.find('\n'));
            CHECK(header.find(",cosine,weight,eps,self_prob") != std::string::npos);
            if (name == "trix") CHECK(header.find(",self_prob,targeted") != std::string::npos);
        }
    }
}

TEST_CASE("dafa and trix: runs interrupted in the recording epoch or after the switch resume bit-identical",
          "[fair][dafa][trix]") {
    cw_train_test::QuietAttacks quiet;
    for (const std::string name : {"dafa", "trix"}) {
        DYNAMIC_SECTION(name) {
            cw_nn_test::ScratchDir straight_dir;
            cw_train_test::BandRun straight = run_dafa_trainer(name, straight_dir.path.string());
            REQUIRE(straight.result.steps == 18);
            // step 9: epoch 1 (the recording epoch) half done — the running probability sums must survive;
            // step 14: epoch 2, after the weights switched on
            for (int64_t cut : {9, 14}) {
                cw_nn_test::ScratchDir cut_dir;
                REQUIRE(run_dafa_trainer(name, cut_dir.path.string(), cut).result.interrupted);
                cw_train_test::BandRun rest = run_dafa_trainer(name, cut_dir.path.string(), -1, true);
                INFO("interrupted after step " << cut);
                REQUIRE(rest.result.steps == 18);
                CHECK(rest.method->class_state() == straight.method->class_state());
                CHECK(cw_train_test::parameter_values(*rest.model) == cw_train_test::parameter_values(*straight.model));
            }
        }
    }
}

TEST_CASE("dafa and trix: registry names, flags and clear errors", "[fair][dafa][trix]") {
    MethodOptions o;
    o.dafa.warmup = 0;
    CHECK_THROWS_WITH(make_method("dafa", o), Catch::Contains("--dafa-warmup must be >= 1"));
    o.dafa.warmup = 3;
    o.dafa.lambda = -1;
    CHECK_THROWS_WITH(make_method("trix", o), Catch::Contains("--dafa-lambda must be >= 0"));
    o.dafa.lambda = 1;
    o.random_start = false;
    CHECK_THROWS_WITH(make_method("dafa", o), Catch::Contains("--no-random-start is not supported"));
    o.random_start = true;
    CHECK(make_method("dafa", o)->name() == "dafa");
    CHECK(make_method("trix", o)->describe().find("targeted") != std::string::npos);
}
