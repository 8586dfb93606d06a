// The attack kernels of the Backend (engine/attack_ops.h): the projected step against the reference projection
// of docs/protocols/attacks.md §0 written out here independently, the objectives against the host formulas, row bookkeeping,
// GPU parity (skipped without a GPU), the comparison ops, and the promise the kernels exist for: an attack's
// iterations copy nothing between host and device, so the number of copies does not grow with the steps.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <vector>

#include "attacks/apgd.h"
#include "attacks/fab.h"
#include "attacks/early_stop_pgd.h"
#include "attacks/fgsm_rs.h"
#include "attacks/losses.h"
#include "attacks/pgd.h"
#include "engine/attack_ops.h"
#include "engine/ops.h"
#include "tests/skip.h"
#include "tests/test_attacks_fixture.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw_test;

namespace {

struct StepCase {
    int64_t n = 8, dim = 75;
    std::vector<float> x_nat, x_adv, grad, eps, alpha;
};

// Points near the box edges, gradients with exact zeros, radii from 0 up to 2 (an L2 radius can exceed 1), steps
// long enough that the box clips after the ball (the last two samples) or instead of it.
StepCase step_case(uint64_t seed) {
    StepCase c;
    Rng rng(seed);
    for (int64_t k = 0; k < c.n * c.dim; ++k) {
        const float u = rng.uniform();
        c.x_nat.push_back(u < 0.1f ? 0.f : u > 0.9f ? 1.f : u);
        c.x_adv.push_back(std::min(std::max(c.x_nat.back() + rng.uniform(-0.1f, 0.1f), 0.f), 1.f));
        c.grad.push_back(rng.uniform() < 0.2f ? 0.f : rng.normal());
    }
    c.eps = {0.f, 2.f / 255, 8.f / 255, 0.05f, 0.5f, 1.f, 1.5f, 2.f};
    c.alpha = {0.01f, 0.5f / 255, 2.f / 255, 0.f, 0.3f, 0.25f, 4.f, 1.5f};
    return c;
}

// docs/protocols/attacks.md §0, spelled out: step, then the ε-ball, then the box.
std::vector<float> reference_step(const StepCase& c, AttackNorm norm, bool with_grad) {
    std::vector<float> out(c.x_adv);
    for (int64_t i = 0; i < c.n; ++i) {
        float* a = out.data() + i * c.dim;
        const float* x = c.x_nat.data() + i * c.dim;
        const float* g = c.grad.data() + i * c.dim;
        if (norm == AttackNorm::Linf) {
            for (int64_t j = 0; j < c.dim; ++j) {
                const float s = with_grad ? (g[j] > 0 ? 1.f : g[j] < 0 ? -1.f : 0.f) : 0.f;
                float v = a[j] + c.alpha[i] * s;
                v = std::min(std::max(v, x[j] - c.eps[i]), x[j] + c.eps[i]);
                a[j] = std::min(std::max(v, 0.f), 1.f);
            }
            continue;
        }
        if (with_grad) {
            double gn = 0;
            for (int64_t j = 0; j < c.dim; ++j) gn += double(g[j]) * g[j];
            for (int64_t j = 0; j < c.dim; ++j) a[j] += float(c.alpha[i] * g[j] / (std::sqrt(gn) + 1e-10));
        }
        double dn = 0;
        for (int64_t j = 0; j < c.dim; ++j) dn += double(a[j] - x[j]) * (a[j] - x[j]);
        dn = std::sqrt(dn);
        const double scale = dn > c.eps[i] ? c.eps[i] / dn : 1.0;
        for (int64_t j = 0; j < c.dim; ++j) a[j] = std::min(std::max(float(x[j] + (a[j] - x[j]) * scale), 0.f), 1.f);
    }
    return out;
}

std::vector<float> kernel_step(const StepCase& c, AttackNorm norm, bool with_grad, Device d) {
    const Shape shape = {c.n, 3, 5, 5};
    Tensor x_adv = Tensor::from_vector(c.x_adv, shape, d);
    const Tensor grad = with_grad ? Tensor::from_vector(c.grad, shape, d) : Tensor();
    attack_step_(norm, x_adv, grad, Tensor::from_vector(c.x_nat, shape, d), Tensor::from_vector(c.eps, {c.n}, d),
                 Tensor::from_vector(c.alpha, {c.n}, d));
    return x_adv.to_vector();
}

void require_in_ball(const StepCase& c, const std::vector<float>& out, AttackNorm norm) {
    for (int64_t i = 0; i < c.n; ++i) {
        double linf = 0, l2 = 0;
        for (int64_t j = i * c.dim; j < (i + 1) * c.dim; ++j) {
            REQUIRE(out[j] >= 0.f);
            REQUIRE(out[j] <= 1.f);
            const double d = double(out[j]) - c.x_nat[j];
            linf = std::max(linf, std::fabs(d));
            l2 += d * d;
        }
        REQUIRE((norm == AttackNorm::Linf ? linf : std::sqrt(l2)) <= c.eps[i] + 1e-6);
    }
}

}  // namespace

TEST_CASE("attack step: L-inf and L2 steps equal the reference projection (ball, then box)", "[attacks]") {
    for (uint64_t seed : {1u, 2u, 3u}) {
        const StepCase c = step_case(seed);
        for (AttackNorm norm : {AttackNorm::Linf, AttackNorm::L2})
            for (bool with_grad : {true, false}) {
                INFO("seed " << seed << (norm == AttackNorm::Linf ? " linf" : " l2") << (with_grad ? " step" : " projection"));
                const std::vector<float> got = kernel_step(c, norm, with_grad, Device::cpu());
                require_close(got, reference_step(c, norm, with_grad), 1e-6);
                require_in_ball(c, got, norm);
            }
    }
    // ε = 0 pins the sample to x_nat whatever the step; α = 0 leaves an in-ball point where it is.
    const StepCase c = step_case(4);
    const std::vector<float> got = kernel_step(c, AttackNorm::Linf, true, Device::cpu());
    for (int64_t j = 0; j < c.dim; ++j) REQUIRE(got[j] == c.x_nat[j]);
}

TEST_CASE("attack step: bad shapes are ShapeErrors naming the operand", "[attacks]") {
    Tensor x = Tensor::zeros({2, 3});
    REQUIRE_THROWS_WITH(attack_step_(AttackNorm::Linf, x, Tensor::zeros({2, 3}), Tensor::zeros({2, 3}),
                                     Tensor::zeros({3}), Tensor::zeros({2})),
                        Catch::Contains("eps must be [2]"));
    REQUIRE_THROWS_WITH(attack_step_(AttackNorm::Linf, x, Tensor::zeros({2, 4}), Tensor::zeros({2, 3}),
                                     Tensor::zeros({2}), Tensor::zeros({2})),
                        Catch::Contains("grad [2, 4]"));
}

TEST_CASE("attack objective kernel: every objective equals its host formula, with flags", "[attacks]") {
    const int64_t n = 7, C = 10;
    Rng rng(5);
    std::vector<float> z(n * C);
    for (float& v : z) v = rng.normal() * 3;
    z[2 * C + 4] = z[2 * C + 7] = 9.f;   // a tie at the top: the lower index is the argmax
    const std::vector<int32_t> y = {0, 1, 7, 3, 4, 5, 9}, t = {1, 2, 4, 0, 9, 6, 8};
    const Tensor logits = Tensor::from_vector(z, {n, C});
    const Tensor labels = Tensor::from_labels(y), targets = Tensor::from_labels(t);
    using Host = std::function<float(const float*, int32_t, int32_t, float*)>;
    const std::vector<std::pair<AttackObjective, Host>> kinds = {
        {AttackObjective::CrossEntropy, [&](const float* r, int32_t yi, int32_t, float* d) { return cross_entropy(r, C, yi, d); }},
        {AttackObjective::TargetCrossEntropy, [&](const float* r, int32_t, int32_t ti, float* d) { return neg_cross_entropy(r, C, ti, d); }},
        {AttackObjective::CwMargin, [&](const float* r, int32_t yi, int32_t, float* d) { return cw_objective(r, C, yi, 2.f, d); }},
        {AttackObjective::TargetMargin, [&](const float* r, int32_t, int32_t ti, float* d) { return targeted_margin(r, C, ti, d); }},
        {AttackObjective::Dlr, [&](const float* r, int32_t yi, int32_t, float* d) { return dlr(r, C, yi, d); }},
        {AttackObjective::DlrTargeted, [&](const float* r, int32_t yi, int32_t ti, float* d) { return dlr_targeted(r, C, yi, ti, d); }},
        {AttackObjective::LogitDifference, [&](const float* r, int32_t yi, int32_t ti, float* d) { return logit_difference(r, C, yi, ti, d); }},
    };
    for (const auto& [kind, host] : kinds) {
        INFO("objective " << static_cast<int>(kind));
        const ObjectiveValues v = attack_objective(kind, logits, labels, targets, 2.f, true);
        const auto value = v.value.to_vector(), dz = v.dz.to_vector(), wrong = v.wrong.to_vector(),
                   on_target = v.on_target.to_vector();
        for (int64_t i = 0; i < n; ++i) {
            std::vector<float> want(C);
            REQUIRE(value[i] == host(z.data() + i * C, y[i], t[i], want.data()));
            for (int64_t j = 0; j < C; ++j) REQUIRE(dz[i * C + j] == want[j]);
            const int32_t pred = argmax_row(z.data() + i * C, C);
            REQUIRE(wrong[i] == (pred != y[i] ? 1.f : 0.f));
            REQUIRE(on_target[i] == (pred == t[i] ? 1.f : 0.f));
        }
    }
    REQUIRE(argmax_row(z.data() + 2 * C, C) == 4);
    REQUIRE(attack_objective(AttackObjective::CrossEntropy, logits, labels, Tensor(), 0.f, false).wrong.to_vector()[2] == 1.f);
    REQUIRE_THROWS_WITH(attack_objective(AttackObjective::DlrTargeted, Tensor::zeros({2, 3}), Tensor::from_labels({0, 1}),
                                         Tensor::from_labels({1, 2}), 0.f, false),
                        Catch::Contains("at least 4 classes"));
}

TEST_CASE("row bookkeeping: take_rows, put_rows_, where_rows copy exactly", "[attacks]") {
    const Tensor x = Tensor::from_vector({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2});
    REQUIRE(take_rows(x, {3, 0}).to_vector() == std::vector<float>{6, 7, 0, 1});
    Tensor dst = Tensor::zeros({4, 2});
    put_rows_(dst, {1, 3}, Tensor::from_vector({9, 8, 7, 6}, {2, 2}));
    REQUIRE(dst.to_vector() == std::vector<float>{0, 0, 9, 8, 0, 0, 7, 6});
    const Tensor mask = Tensor::from_vector({1, 0, 0, 1}, {4});
    const Tensor b = Tensor::from_vector({-1, -2, -3, -4, std::nanf(""), -6, -7, -8}, {4, 2});
    const auto w = where_rows(mask, x, b).to_vector();
    REQUIRE(w[0] == 0);
    REQUIRE(w[1] == 1);
    REQUIRE(w[2] == -3);
    REQUIRE(std::isnan(w[4]));   // an exact copy: a NaN in the chosen row stays, one in the other row never leaks
    REQUIRE(w[6] == 6);
    REQUIRE(where_rows(mask, b, x).to_vector()[4] == 4);
    REQUIRE_THROWS_WITH(take_rows(x, {4}), Catch::Contains("row 4 is outside [0, 4)"));
}

TEST_CASE("greater and greater_equal: 0/1 values, NaN compares false, never recorded", "[ops]") {
    const Tensor a = Tensor::from_vector({1, 2, 3, std::nanf("")}, {4}).set_requires_grad(true);
    const Tensor b = Tensor::from_vector({2, 2, 2, 0}, {4});
    const Tensor g = greater(a, b), ge = greater_equal(a, b);
    REQUIRE(g.to_vector() == std::vector<float>{0, 0, 1, 0});
    REQUIRE(ge.to_vector() == std::vector<float>{0, 1, 1, 0});
    REQUIRE(g.is_leaf());
    REQUIRE_FALSE(g.requires_grad());
    REQUIRE(greater(Tensor::scalar(1.5f), b).to_vector() == std::vector<float>{0, 0, 0, 1});
}

TEST_CASE("GPU parity: attack step, objectives and row bookkeeping", "[cuda][attacks]") {
    CW_SKIP_WITHOUT_GPU();
    const Device gpu = Device::cuda(0);
    for (uint64_t seed : {1u, 2u}) {
        const StepCase c = step_case(seed);
        for (bool with_grad : {true, false}) {
            // L-inf is elementwise with one rounding per operation on both devices: bit for bit.
            REQUIRE(kernel_step(c, AttackNorm::Linf, with_grad, gpu) == kernel_step(c, AttackNorm::Linf, with_grad, Device::cpu()));
            // L2 sums norms in another order (and may fuse multiply-adds).
            require_close(kernel_step(c, AttackNorm::L2, with_grad, gpu), kernel_step(c, AttackNorm::L2, with_grad, Device::cpu()), 1e-6);
        }
    }
    const int64_t n = 9, C = 10;
    const Tensor logits = randn({n, C}, 3, 2.f, false);
    const Tensor labels = Tensor::from_labels({0, 1, 2, 3, 4, 5, 6, 7, 8}), targets = Tensor::from_labels({1, 2, 3, 4, 5, 6, 7, 8, 9});
    for (AttackObjective kind : {AttackObjective::CrossEntropy, AttackObjective::TargetCrossEntropy, AttackObjective::CwMargin,
                                 AttackObjective::TargetMargin, AttackObjective::Dlr, AttackObjective::DlrTargeted,
                                 AttackObjective::LogitDifference}) {
        const ObjectiveValues cpu = attack_objective(kind, logits, labels, targets, 1.f, true);
        const ObjectiveValues dev = attack_objective(kind, logits.to(gpu), labels.to(gpu), targets.to(gpu), 1.f, true);
        require_close(dev.value.to_vector(), cpu.value.to_vector(), 1e-6);
        require_close(dev.dz.to_vector(), cpu.dz.to_vector(), 1e-6);
        REQUIRE(dev.wrong.to_vector() == cpu.wrong.to_vector());
        REQUIRE(dev.on_target.to_vector() == cpu.on_target.to_vector());
    }
    const Tensor x = randn({5, 2, 3, 3}, 4, 1.f, false);
    const Tensor mask = Tensor::from_vector(std::vector<float>{1, 0, 1, 0, 0}, {5});
    REQUIRE(take_rows(x.to(gpu), {4, 1}).to_vector() == take_rows(x, {4, 1}).to_vector());
    REQUIRE(where_rows(mask.to(gpu), x.to(gpu), mul(x, 2.f).to(gpu)).to_vector() == where_rows(mask, x, mul(x, 2.f)).to_vector());
    Tensor dst_cpu = Tensor::zeros({5, 2, 3, 3}), dst_gpu = dst_cpu.to(gpu);
    put_rows_(dst_cpu, {0, 3}, take_rows(x, {1, 2}));
    put_rows_(dst_gpu, {0, 3}, take_rows(x.to(gpu), {1, 2}));
    REQUIRE(dst_gpu.to_vector() == dst_cpu.to_vector());
}

TEST_CASE("attack iterations copy nothing between host and device: copies do not grow with the steps", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    Backend& cpu = backend(Device::cpu());
    auto copies = [&](Attack& attack) {
        Rng rng(3);
        const int64_t before = cpu.host_transfers().total();
        attack.run(model, data.x, data.y, rng);
        return cpu.host_transfers().total() - before;
    };
    auto pgd = [](int steps, bool freeze, PgdLoss loss, Norm norm, bool targeted) {
        PgdConfig c;
        c.eps = kBlobEps;
        c.alpha = kBlobEps / 4;
        c.steps = steps;
        c.freeze_reached = freeze;
        c.loss = loss;
        c.norm = norm;
        c.targeted = targeted;
        return Pgd(c);
    };
    for (bool freeze : {false, true})
        for (PgdLoss loss : {PgdLoss::CE, PgdLoss::Margin})
            for (Norm norm : {Norm::Linf, Norm::L2})
                for (bool targeted : {false, true}) {
                    Pgd few = pgd(2, freeze, loss, norm, targeted), many = pgd(12, freeze, loss, norm, targeted);
                    const int64_t a = copies(few), b = copies(many);
                    INFO("PGD freeze " << freeze << " margin " << (loss == PgdLoss::Margin) << " l2 " << (norm == Norm::L2)
                                       << " targeted " << targeted << ": " << a << " vs " << b << " copies");
                    REQUIRE(a > 0);   // the counter counts (labels, radii, start, predictions)
                    REQUIRE(a == b);
                }
    for (ApgdLoss loss : {ApgdLoss::CE, ApgdLoss::DLR}) {
        Apgd few({Norm::Linf, kBlobEps, 5, 1, 0.75f, loss}), many({Norm::Linf, kBlobEps, 40, 1, 0.75f, loss});
        const int64_t a = copies(few), b = copies(many);
        INFO("APGD: " << a << " vs " << b << " copies");
        REQUIRE(a == b);
    }
    EarlyStopPgdConfig fat = fat_cfa_config(kBlobEps);
    fat.steps = 2;
    EarlyStopPgd fat_few(fat);
    fat.steps = 12;
    EarlyStopPgd fat_many(fat);
    REQUIRE(copies(fat_few) == copies(fat_many));
    // FAB-T: two restarts (the second's random start is drawn on the host, once per run, not per iteration).
    FabTargeted fab_few(FabConfig{kBlobEps, 2, 2, 0.1f, 1.05f, 0.9f, 3, ModelMode::Eval});
    FabTargeted fab_many(FabConfig{kBlobEps, 12, 2, 0.1f, 1.05f, 0.9f, 3, ModelMode::Eval});
    const int64_t fa = copies(fab_few), fb = copies(fab_many);
    INFO("FAB-T: " << fa << " vs " << fb << " copies");
    REQUIRE(fa == fb);
}

namespace {
// Notes how many device-to-host copies had happened when the model first ran, and can fail on demand.
class FirstForwardProbe : public CountingModel {
public:
    using CountingModel::CountingModel;
    Tensor forward(const Tensor& x) override {
        if (reads_before < 0) reads_before = backend(Device::cpu()).host_transfers().to_host;
        if (fail) throw std::runtime_error("the model failed");
        return CountingModel::forward(x);
    }
    int64_t reads_before = -1;
    bool fail = false;
};
}  // namespace

TEST_CASE("a training-time attack reads nothing back before its steps, and still rejects bad pixels", "[attacks]") {
    QuietAttacks quiet;
    const Blobs& data = test_blobs();
    Backend& cpu = backend(Device::cpu());
    auto reads = [&](ModelMode mode, int64_t& before_first_forward) {
        FirstForwardProbe model(trained_mlp_on(Device::cpu()));
        PgdConfig c;
        c.eps = kBlobEps;
        c.alpha = kBlobEps / 4;
        c.steps = 3;
        c.mode = mode;
        Pgd pgd(c);
        Rng rng(1);
        const int64_t before = cpu.host_transfers().to_host;
        pgd.run(model, data.x, data.y, rng);
        before_first_forward = model.reads_before - before;
        return cpu.host_transfers().to_host - before;
    };
    // Train mode (adversarial training): on a GPU a read-back waits for the queue, so none comes before the steps;
    // the pixel check is read once, afterwards, and the labels never.
    int64_t first = -1;
    REQUIRE(reads(ModelMode::Train, first) == 1);
    REQUIRE(first == 0);
    // Eval mode checks the pixels first (and reads the predictions and labels at the end).
    REQUIRE(reads(ModelMode::Eval, first) == 3);
    REQUIRE(first == 1);

    // Bad pixels are still an error in train mode, and win over a failure they may have caused.
    PgdConfig c;
    c.eps = kBlobEps;
    c.steps = 2;
    c.mode = ModelMode::Train;
    Pgd pgd(c);
    Rng rng(2);
    std::vector<float> bad = data.x.to_vector();
    bad[10] = 1.5f;
    const Tensor bad_x = Tensor::from_vector(bad, data.x.shape());
    FirstForwardProbe model(trained_mlp_on(Device::cpu()));
    REQUIRE_THROWS_WITH(pgd.run(model, bad_x, data.y, rng),
                        Catch::Contains("must lie in [0, 1]") && Catch::Contains("1.500000]"));
    model.fail = true;
    REQUIRE_THROWS_WITH(pgd.run(model, bad_x, data.y, rng), Catch::Contains("must lie in [0, 1]"));
    REQUIRE_THROWS_WITH(pgd.run(model, data.x, data.y, rng), Catch::Contains("the model failed"));
}
