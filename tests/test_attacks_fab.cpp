// FAB-T on the model's device: its step and its bookkeeping against values worked by hand, the whole attack against
// a plain host-side transcription of the loop classwise ran before FAB-T moved to the device (per-sample
// projections on the host, AutoAttack's targeted rounds around them), which must agree bit for bit, and the CUDA
// kernels (a bisection instead of the CPU's kink walk) against the CPU.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attacks/fab.h"
#include "attacks/losses.h"
#include "engine/attack_ops.h"
#include "engine/linf_box_projection.h"
#include "tests/cuda_scopes.h"
#include "tests/skip.h"
#include "tests/test_attacks_fixture.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw_test;

namespace {

// AutoAttack's FAB-T (L∞), written out on the host; returns the adversarial batch, sample-major.
std::vector<float> host_fab_t(nn::Module& model, const Tensor& x_all, const std::vector<int32_t>& labels,
                              const FabConfig& c, Rng& rng) {
    ModelOracle oracle(model, Device::cpu());
    const Images X = from_tensor(x_all);
    const int64_t dim = X.dim();
    const ModelOutput clean = oracle.forward(X);
    std::vector<uint8_t> robust(labels.size());
    for (size_t i = 0; i < labels.size(); ++i) robust[i] = clean.pred(static_cast<int64_t>(i)) == labels[i];
    Images out = X;
    const int n_targets = std::min<int>(c.n_target_classes, static_cast<int>(clean.classes) - 1);
    for (int rank = 2; rank <= n_targets + 1; ++rank)
        for (int restart = 0; restart < c.restarts; ++restart) {
            const std::vector<int64_t> rows = where(robust);
            if (rows.empty()) return out.v;
            const int64_t n = static_cast<int64_t>(rows.size());
            std::vector<int32_t> y, t;
            for (int64_t i : rows) {
                y.push_back(labels[i]);
                t.push_back(kth_largest(clean.row(i), clean.classes, rank));
            }
            const Images x = take_rows(X, rows);
            Images x1 = x, best = x, d1 = x, d2 = x;
            std::vector<float> best_dist(n, std::numeric_limits<float>::infinity());
            if (restart > 0) {
                for (int64_t i = 0; i < n; ++i) {
                    std::vector<float> u(dim);
                    float un = 0.f;
                    for (auto& v : u) {
                        v = rng.uniform(-1.f, 1.f);
                        un = std::max(un, std::fabs(v));
                    }
                    const float radius = 0.5f * std::min(best_dist[i], c.eps);
                    for (int64_t j = 0; j < dim; ++j) x1.row(i)[j] += radius * u[j] / un;
                }
                clip_box(x1);
            }
            const Objective h = make_objective(AttackObjective::LogitDifference, y, Device::cpu(), t);
            std::vector<LinfKink> scratch;
            for (int it = 0; it < c.n_iter; ++it) {
                const Evaluation lin = oracle.value_and_grad(to_tensor(x1, Device::cpu()), h);
                const std::vector<float> value = lin.obj.value.to_vector(), grad = lin.grad.to_vector();
                for (int64_t i = 0; i < n; ++i) {
                    const float* w = grad.data() + i * dim;
                    double b = -value[i];
                    for (int64_t j = 0; j < dim; ++j) b += double(w[j]) * x1.row(i)[j];
                    const float n1 = linf_box_projection(x1.row(i), w, b, dim, d1.row(i), scratch);
                    const float n2 = linf_box_projection(x.row(i), w, b, dim, d2.row(i), scratch);
                    const float a1 = std::max(n1, 1e-8f), a2 = std::max(n2, 1e-8f);
                    const float a = std::min(std::max(a1 / (a1 + a2), 0.f), c.alpha_max);
                    for (int64_t j = 0; j < dim; ++j) {
                        const float v = (x1.row(i)[j] + c.eta * d1.row(i)[j]) * (1 - a) +
                                        (x.row(i)[j] + c.eta * d2.row(i)[j]) * a;
                        x1.row(i)[j] = std::min(std::max(v, 0.f), 1.f);
                    }
                }
                const ModelOutput check = oracle.forward(x1);
                for (int64_t i = 0; i < n; ++i) {
                    if (check.pred(i) == y[i]) continue;
                    float dist = 0.f;
                    for (int64_t j = 0; j < dim; ++j) dist = std::max(dist, std::fabs(x1.row(i)[j] - x.row(i)[j]));
                    if (dist < best_dist[i]) {
                        best_dist[i] = dist;
                        std::copy(x1.row(i), x1.row(i) + dim, best.row(i));
                    }
                    for (int64_t j = 0; j < dim; ++j) x1.row(i)[j] = x.row(i)[j] + c.beta * (x1.row(i)[j] - x.row(i)[j]);
                }
            }
            for (int64_t k = 0; k < n; ++k)
                if (best_dist[k] <= c.eps) {
                    std::copy(best.row(k), best.row(k) + dim, out.row(rows[k]));
                    robust[rows[k]] = 0;
                }
        }
    return out.v;
}

// Random rows for the parity tests: x_nat in the box, x1 within 0.1 of it, gradients of either sign with some
// zeros, and values of either sign. Row 0 has a zero gradient; row 1's hyperplane lies beyond the box's reach.
struct StepInputs {
    std::vector<float> x1, x_nat, grad, value;
};
StepInputs random_step_inputs(int64_t n, int64_t dim, uint64_t seed) {
    Rng r(seed);
    StepInputs s{std::vector<float>(n * dim), std::vector<float>(n * dim), std::vector<float>(n * dim),
                 std::vector<float>(n)};
    for (int64_t k = 0; k < n * dim; ++k) {
        s.x_nat[k] = r.uniform();
        s.x1[k] = std::min(std::max(s.x_nat[k] + r.uniform(-0.1f, 0.1f), 0.f), 1.f);
        s.grad[k] = r.uniform() < 0.1f ? 0.f : r.uniform(-1.f, 1.f);
    }
    for (auto& v : s.value) v = r.uniform(-2.f, 2.f);
    std::fill(s.grad.begin(), s.grad.begin() + dim, 0.f);
    s.value[1] = -1e4f;
    return s;
}

}  // namespace

TEST_CASE("fab_step_ projects both points onto the linearised boundary and mixes them (worked by hand)", "[attacks]") {
    // Four samples of three values, α_max 0.45, η 1.05. b = ⟨w, x1⟩ − h(x1); r = b − ⟨w, p⟩.
    // 0: w (1, 2, 0), h −0.3: b = 1.8. From x1 (0.5, 0.5): r = 0.3, upwards, g(λ) = 3λ → λ 0.1, d1 = (0.1, 0.1, 0).
    //    From x_nat (0.4, 0.5): r = 0.4 → λ 2/15, d2 = (2/15, 2/15, 0). a = 0.1/(0.1 + 2/15) = 3/7 (under α_max).
    //    x1 ← (1 − a)(x1 + η d1) + a(x_nat + η d2) = (0.605 − 0.065a, 0.605 + 0.035a, 0.3).
    // 1: w (2, −1, 0), h 2.5: b = 1.6 − 2.5 = −0.9, r = −2.5 (x1 = x_nat). Downwards for w > 0 (room 0.9), upwards
    //    for w < 0 (room 0.8): g(λ) = 3λ up to the kink at 0.8 (g = 2.4 < 2.5), then 0.8 + 2λ → λ 0.85.
    //    d = (−0.85, 0.8, 0); both points equal, so x1 ← box(x1 + η d) = (0.9 − 0.8925, min(1.04, 1), 0.5).
    // 2: w (1, 1, 0), h −5: r = 5, but the box reaches only g(∞) = 1: every coordinate to its end, d = (0.5, 0.5, 0);
    //    x1 ← box(0.5 + 1.05·0.5) = 1.
    // 3: w = 0: no step (d1 = d2 = 0), a = 1e−8/2e−8 = 0.5, cut to 0.45: x1 ← 0.55·x1 + 0.45·x_nat.
    const std::vector<float> x1 = {0.5f, 0.5f, 0.3f, 0.9f, 0.2f, 0.5f, 0.5f, 0.5f, 0.5f, 0.3f, 0.7f, 0.1f};
    const std::vector<float> nat = {0.4f, 0.5f, 0.3f, 0.9f, 0.2f, 0.5f, 0.5f, 0.5f, 0.5f, 0.2f, 0.7f, 0.1f};
    const std::vector<float> grad = {1.f, 2.f, 0.f, 2.f, -1.f, 0.f, 1.f, 1.f, 0.f, 0.f, 0.f, 0.f};
    Tensor x = Tensor::from_vector(x1, {4, 3});
    fab_step_(x, Tensor::from_vector(nat, {4, 3}), Tensor::from_vector(grad, {4, 3}),
              Tensor::from_vector({-0.3f, 2.5f, -5.f, 0.3f}, {4}), 1.05f, 0.45f);
    const double a = 3.0 / 7.0;
    const std::vector<double> want = {0.605 - 0.065 * a, 0.605 + 0.035 * a, 0.3, 0.0075, 1.0, 0.5, 1.0, 1.0, 0.5,
                                      0.255, 0.7, 0.1};
    const std::vector<float> got = x.to_vector();
    for (size_t j = 0; j < want.size(); ++j) {
        INFO("value " << j);
        REQUIRE(got[j] == Approx(want[j]).margin(2e-7));
    }

    Tensor bad = Tensor::from_vector(x1, {4, 3});
    REQUIRE_THROWS_WITH(fab_step_(bad, Tensor::from_vector(nat, {4, 3}), Tensor::from_vector(grad, {6, 2}),
                                  Tensor::zeros({4}), 1.05f, 0.1f),
                        Catch::Contains("grad [6, 2]"));
    REQUIRE_THROWS_WITH(fab_step_(bad, Tensor::from_vector(nat, {4, 3}), Tensor::from_vector(grad, {4, 3}),
                                  Tensor::zeros({3}), 1.05f, 0.1f),
                        Catch::Contains("value must be [4]"));
}

TEST_CASE("fab_record_ keeps the closest misclassified point and pulls every misclassified one back", "[attacks]") {
    // 0: wrong, ||x1 − x||∞ = 0.2 < +inf: the new best; pulled back to x + 0.9(x1 − x) = (0.68, 0.41).
    // 1: wrong, distance 0.3 > the best 0.1: the best stays, but the point is still pulled back: (0.47, 0.11).
    // 2: classified correctly: nothing changes.
    Tensor x1 = Tensor::from_vector({0.7f, 0.4f, 0.5f, 0.1f, 0.9f, 0.9f}, {3, 2});
    const Tensor nat = Tensor::from_vector({0.5f, 0.5f, 0.2f, 0.2f, 0.1f, 0.1f}, {3, 2});
    Tensor best = Tensor::zeros({3, 2});
    const float inf = std::numeric_limits<float>::infinity();
    Tensor best_dist = Tensor::from_vector({inf, 0.1f, inf}, {3});
    fab_record_(x1, nat, Tensor::from_vector({1.f, 1.f, 0.f}, {3}), 0.9f, best, best_dist);
    const std::vector<float> got = x1.to_vector(), got_best = best.to_vector(), got_dist = best_dist.to_vector();
    const std::vector<double> want = {0.68, 0.41, 0.47, 0.11, 0.9, 0.9};
    for (size_t j = 0; j < want.size(); ++j) REQUIRE(got[j] == Approx(want[j]).margin(1e-7));
    REQUIRE(got_best == std::vector<float>{0.7f, 0.4f, 0.f, 0.f, 0.f, 0.f});
    REQUIRE(got_dist[0] == Approx(0.2).margin(1e-7));
    REQUIRE(got_dist[1] == 0.1f);
    REQUIRE(got_dist[2] == inf);
}

TEST_CASE("FAB-T on the device equals AutoAttack's host-side loop bit for bit", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    // Two restarts, so the random start is compared too; a radius at which FAB-T breaks some samples but not all.
    for (const int iterations : {1, 10}) {
        const FabConfig c{kBlobEps, iterations, 2, 0.1f, 1.05f, 0.9f, 3, ModelMode::Eval};
        FabTargeted fab(c);
        Rng rng(5), ref_rng(5);
        const AttackResult r = fab.run(model, data.x, data.y, rng);
        const std::vector<float> want = host_fab_t(model, data.x, data.labels, c, ref_rng);
        INFO("iterations " << iterations);
        REQUIRE(r.x_adv.to_vector() == want);
        REQUIRE(rng.uniform() == ref_rng.uniform());   // both drew the same random numbers
        if (iterations == 10) {
            const double clean = accuracy(model, data.x, data.labels), robust = accuracy_of(r.pred, data.labels);
            REQUIRE(robust < clean - 0.1);
            REQUIRE(robust > 0.05);
        }
    }
}

TEST_CASE("GPU parity: fab_step_, fab_record_ and FAB-T", "[cuda]") {
    CW_SKIP_WITHOUT_GPU();
    const Device gpu = Device::cuda();
    // Short rows and CIFAR-length rows (the bisection's search is per row, whatever its length).
    for (const int64_t dim : {int64_t(7), int64_t(3072)}) {
        const int64_t n = 33;
        const StepInputs s = random_step_inputs(n, dim, 17 + dim);
        Tensor cpu = Tensor::from_vector(s.x1, {n, dim}), dev = cpu.to(gpu);
        const Tensor nat = Tensor::from_vector(s.x_nat, {n, dim}), grad = Tensor::from_vector(s.grad, {n, dim});
        const Tensor value = Tensor::from_vector(s.value, {n});
        fab_step_(cpu, nat, grad, value, 1.05f, 0.1f);
        fab_step_(dev, nat.to(gpu), grad.to(gpu), value.to(gpu), 1.05f, 0.1f);
        INFO("dim " << dim);
        REQUIRE(max_abs_difference(dev.to_vector(), cpu.to_vector()) <= 1e-6);

        std::vector<float> wrong(n), prior(n);
        Rng r(dim);
        for (int64_t i = 0; i < n; ++i) {
            wrong[i] = r.uniform() < 0.6f ? 1.f : 0.f;
            prior[i] = r.uniform() < 0.5f ? std::numeric_limits<float>::infinity() : r.uniform(0.f, 0.15f);
        }
        // fab_record_ starts from the same iterate on both devices (the step above may differ in the last bits).
        dev = cpu.to(gpu);
        Tensor best_cpu = Tensor::zeros({n, dim}), dist_cpu = Tensor::from_vector(prior, {n});
        Tensor best_gpu = best_cpu.to(gpu), dist_gpu = dist_cpu.to(gpu);
        fab_record_(cpu, nat, Tensor::from_vector(wrong, {n}), 0.9f, best_cpu, dist_cpu);
        fab_record_(dev, nat.to(gpu), Tensor::from_vector(wrong, {n}).to(gpu), 0.9f, best_gpu, dist_gpu);
        // The pull-back x_nat + β(x - x_nat) may be one fused multiply-add on the GPU: equal to within an ulp of 1.
        REQUIRE(max_abs_difference(dev.to_vector(), cpu.to_vector()) <= 1.2e-7);
        REQUIRE(max_abs_difference(best_gpu.to_vector(), best_cpu.to_vector()) <= 1.2e-7);
        REQUIRE(max_abs_difference(dist_gpu.to_vector(), dist_cpu.to_vector()) <= 1.2e-7);
        // The same rows improved: a recorded row has a finite distance below its prior on both devices.
        const std::vector<float> dc = dist_cpu.to_vector(), dg = dist_gpu.to_vector();
        for (int64_t i = 0; i < n; ++i) REQUIRE((dc[i] < prior[i]) == (dg[i] < prior[i]));
    }

    // The whole attack with full-fp32 GEMMs: under TF32 (the GPU default) the MLP's logits carry relative errors
    // near 1e-3, enough to move a minimal-distance point (seen: one sample 0.075 away, every prediction equal).
    Tf32Scope strict(false);
    QuietAttacks quiet;
    const Blobs& data = test_blobs();
    auto model_gpu = trained_mlp_on(gpu);
    FabTargeted fab(FabConfig{kBlobEps, 10, 2, 0.1f, 1.05f, 0.9f, 3, ModelMode::Eval});
    Rng rng_cpu(5), rng_gpu(5);
    const AttackResult on_cpu = fab.run(trained_mlp(), data.x, data.y, rng_cpu);
    const AttackResult on_gpu = fab.run(*model_gpu, data.x.to(gpu), data.y.to(gpu), rng_gpu);
    REQUIRE(on_gpu.pred == on_cpu.pred);
    REQUIRE(max_abs_difference(on_gpu.x_adv.to_vector(), on_cpu.x_adv.to_vector()) <= 1e-4);
}
