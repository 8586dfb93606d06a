// Square on the model's device: its window step against values worked by hand, and the whole attack against a
// plain host-side transcription of AutoAttack's random search (the loop classwise ran before its images moved to
// the device), which must agree bit for bit: points, predictions and query counts.
#include <algorithm>
#include <cmath>

#include "attacks/square.h"
#include "engine/attack_ops.h"
#include "tests/cuda_scopes.h"
#include "tests/skip.h"
#include "tests/test_attacks_fixture.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw_test;

namespace {

struct HostSquare {
    std::vector<float> x_adv;
    std::vector<int32_t> pred;
    std::vector<int64_t> queries;
};

// logits of host images [n, 3, 8, 8] (eval mode, no gradient)
std::vector<float> logits_of(nn::Module& model, const std::vector<float>& x, int64_t n) {
    NoGradGuard g;
    return model.forward(Tensor::from_vector(x, {n, 3, 8, 8})).to_vector();
}

// AutoAttack's Square (L∞, margin loss, one restart), written out on the host: the reference the device loop must
// equal. Margin m = z_y − max_{j≠y} z_j; argmax ties go to the lower index.
HostSquare host_square(nn::Module& model, const std::vector<float>& x, const std::vector<int32_t>& y, float eps,
                       int n_queries, Rng& rng) {
    const int64_t n = static_cast<int64_t>(y.size()), C = 10, c = 3, h = 8, w = 8, dim = c * h * w;
    auto margin = [&](const float* z, int32_t label) {
        float other = -INFINITY;
        for (int64_t j = 0; j < C; ++j)
            if (j != label) other = std::max(other, z[j]);
        return z[label] - other;
    };
    auto argmax = [&](const float* z) {
        int32_t b = 0;
        for (int32_t j = 1; j < C; ++j)
            if (z[j] > z[b]) b = j;
        return b;
    };
    HostSquare out{x, std::vector<int32_t>(n), std::vector<int64_t>(n, 1)};
    const std::vector<float> clean = logits_of(model, x, n);
    std::vector<int64_t> run;   // the correctly classified samples
    for (int64_t i = 0; i < n; ++i) {
        out.pred[i] = argmax(&clean[i * C]);
        if (out.pred[i] == y[i]) run.push_back(i);
    }
    const int64_t m = static_cast<int64_t>(run.size());
    std::vector<float> best(m * dim);
    for (int64_t k = 0; k < m; ++k)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t col = 0; col < w; ++col) {
                const float sigma = rng.uniform() < 0.5f ? -eps : eps;
                for (int64_t row = 0; row < h; ++row) {
                    const int64_t j = (ch * h + row) * w + col;
                    best[k * dim + j] = std::min(std::max(x[run[k] * dim + j] + sigma, 0.f), 1.f);
                }
            }
    const std::vector<float> z0 = logits_of(model, best, m);
    std::vector<float> m_best(m), loss_best(m);
    std::vector<int32_t> pred(m);
    for (int64_t k = 0; k < m; ++k) {
        m_best[k] = loss_best[k] = margin(&z0[k * C], y[run[k]]);
        pred[k] = argmax(&z0[k * C]);
        ++out.queries[run[k]];
    }
    for (int it = 0; it < n_queries; ++it) {
        std::vector<int64_t> active;
        for (int64_t k = 0; k < m; ++k)
            if (m_best[k] > 0) active.push_back(k);
        if (active.empty()) break;
        const int s = square_side(square_p_schedule(it, 0.8f), c, h, w);
        const int64_t vh = h - s > 0 ? static_cast<int64_t>(std::floor(rng.uniform() * (h - s))) : 0;
        const int64_t vw = w - s > 0 ? static_cast<int64_t>(std::floor(rng.uniform() * (w - s))) : 0;
        float colour[3];
        for (float& v : colour) v = rng.uniform() < 0.5f ? -1.f : 1.f;
        std::vector<float> cand;
        for (int64_t k : active) {
            std::vector<float> a(best.begin() + k * dim, best.begin() + (k + 1) * dim);
            for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t row = vh; row < vh + s; ++row)
                    for (int64_t col = vw; col < vw + s; ++col) {
                        const int64_t j = (ch * h + row) * w + col;
                        const float nat = x[run[k] * dim + j];
                        const float v = std::min(std::max(a[j] + 2 * eps * colour[ch], nat - eps), nat + eps);
                        a[j] = std::min(std::max(v, 0.f), 1.f);
                    }
            cand.insert(cand.end(), a.begin(), a.end());
        }
        const std::vector<float> z = logits_of(model, cand, static_cast<int64_t>(active.size()));
        for (size_t q = 0; q < active.size(); ++q) {
            const int64_t k = active[q];
            ++out.queries[run[k]];
            const float mq = margin(&z[q * C], y[run[k]]);
            const bool improved = mq < loss_best[k];
            if (improved) loss_best[k] = mq;
            if (improved || mq <= 0) {
                m_best[k] = mq;
                pred[k] = argmax(&z[q * C]);
                std::copy(cand.begin() + q * dim, cand.begin() + (q + 1) * dim, best.begin() + k * dim);
            }
        }
    }
    for (int64_t k = 0; k < m; ++k) {
        if (pred[k] == y[run[k]]) continue;   // not broken: the clean image is returned
        out.pred[run[k]] = pred[k];
        std::copy(best.begin() + k * dim, best.begin() + (k + 1) * dim, out.x_adv.begin() + run[k] * dim);
    }
    return out;
}

}  // namespace

TEST_CASE("square_window_ moves the window to x_nat ± ε within the box, and nothing else", "[attacks]") {
    // Two images of 2 channels, 3x3; image k takes x_nat row rows[k] = {1, 0}; a 2x2 window at (1, 0);
    // channel 0 positive, channel 1 negative.
    std::vector<float> adv(2 * 18, 0.5f), nat(2 * 18, 0.5f);
    nat[18 + 3] = 0.95f;   // x_nat row 1, channel 0, (1, 0): x_nat + ε = 1.05 is cut to 1 by the box
    adv[1] = 0.3f;         // image 0, channel 0, (0, 1): outside the window, untouched
    adv[9 + 4] = 0.45f;    // image 0, channel 1, (1, 1): 0.45 − 2ε = 0.25, then up to x_nat − ε = 0.4
    nat[0 * 18 + 9 + 7] = 0.2f;   // x_nat row 0, channel 1, (2, 1): image 1's; 0.5 − 0.2 = 0.3 → down to 0.1
    Tensor x_adv = Tensor::from_vector(adv, {2, 2, 3, 3});
    const Tensor x_nat = Tensor::from_vector(nat, {2, 2, 3, 3});
    const Tensor eps = Tensor::from_vector({0.1f, 0.1f}, {2});
    square_window_(x_adv, x_nat, eps, {1, 0}, SquareWindow{1, 0, 2, 0b10u});
    const std::vector<float> got = x_adv.to_vector();
    std::vector<float> want(adv);
    // Image 0 takes x_nat row 1. Channel 0, window values j = 3, 4, 6, 7 (pixels (1,0), (1,1), (2,0), (2,1)):
    // 0.5 + 2ε = 0.7, clipped to [x_nat − ε, x_nat + ε].
    want[3] = 0.85f;                      // x_nat 0.95: the ball starts at 0.85
    want[4] = want[6] = want[7] = 0.6f;   // x_nat 0.5: cut to 0.6
    // Channel 1 is negative: 0.5 − 2ε = 0.3 (0.45 − 2ε = 0.25 at j = 4), up to x_nat − ε = 0.4.
    want[9 + 3] = want[9 + 4] = want[9 + 6] = want[9 + 7] = 0.4f;
    // Image 1 takes x_nat row 0: channel 0 → 0.6; channel 1 → 0.4, except j = 7, where x_nat = 0.2.
    for (int j : {3, 4, 6, 7}) want[18 + j] = 0.6f;
    for (int j : {3, 4, 6}) want[18 + 9 + j] = 0.4f;
    want[18 + 9 + 7] = 0.3f;   // x_nat 0.2: 0.5 − 0.2 = 0.3 lies in [0.1, 0.3]
    for (size_t j = 0; j < want.size(); ++j) REQUIRE(got[j] == Approx(want[j]).margin(1e-7));

    // A window that reaches the box: x_nat 0.95 + ε lands at 1 only where the step pushes past it.
    Tensor edge = Tensor::from_vector(std::vector<float>(18, 0.98f), {1, 2, 3, 3});
    const Tensor nat_edge = Tensor::from_vector(std::vector<float>(18, 0.95f), {1, 2, 3, 3});
    square_window_(edge, nat_edge, Tensor::from_vector({0.1f}, {1}), {0}, SquareWindow{0, 0, 3, 0u});
    for (float v : edge.to_vector()) REQUIRE(v == 1.f);

    REQUIRE_THROWS_WITH(square_window_(x_adv, x_nat, eps, {0, 1}, SquareWindow{2, 0, 2, 0u}),
                        Catch::Contains("does not fit 3x3"));
    REQUIRE_THROWS_WITH(square_window_(x_adv, x_nat, eps, {0}, SquareWindow{0, 0, 1, 0u}),
                        Catch::Contains("1 rows for 2 images"));
    REQUIRE_THROWS_WITH(square_window_(x_adv, x_nat, eps, {0, 2}, SquareWindow{0, 0, 1, 0u}),
                        Catch::Contains("row 2 is outside"));
}

TEST_CASE("Square on the device equals AutoAttack's host-side loop bit for bit", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    // A radius at which Square breaks some samples within the budget, so accepted windows and returned points are
    // compared too (at kBlobEps it breaks none in 200 queries).
    const float eps = 2.5f * kBlobEps;
    for (const int budget : {3, 40, 200}) {
        Square square(SquareConfig{eps, budget, 0.8f, 1, ModelMode::Eval});
        Rng rng(11), ref_rng(11);
        const AttackResult r = square.run(model, data.x, data.y, rng);
        const HostSquare want = host_square(model, data.x.to_vector(), data.labels, eps, budget, ref_rng);
        INFO("budget " << budget);
        REQUIRE(r.pred == want.pred);
        REQUIRE(r.queries == want.queries);
        REQUIRE(r.x_adv.to_vector() == want.x_adv);
        REQUIRE(rng.uniform() == ref_rng.uniform());   // both drew the same random numbers
        if (budget == 200) REQUIRE(accuracy_of(r.pred, data.labels) < accuracy(model, data.x, data.labels) - 0.1);
    }
}

TEST_CASE("GPU parity: square_window_ and Square", "[cuda]") {
    CW_SKIP_WITHOUT_GPU();
    const Device gpu = Device::cuda();
    Rng r(3);
    std::vector<float> a(4 * 3 * 8 * 8), b(a.size()), e(5);
    for (auto& v : a) v = r.uniform();
    for (auto& v : b) v = r.uniform();
    b.resize(5 * 3 * 8 * 8, 0.5f);
    for (auto& v : e) v = r.uniform(0.01f, 0.2f);
    Tensor cpu = Tensor::from_vector(a, {4, 3, 8, 8}), dev = cpu.to(gpu);
    const Tensor nat = Tensor::from_vector(b, {5, 3, 8, 8}), eps = Tensor::from_vector(e, {5});
    const SquareWindow win{2, 3, 5, 0b101u};
    square_window_(cpu, nat, eps, {4, 0, 2, 1}, win);
    square_window_(dev, nat.to(gpu), eps.to(gpu), {4, 0, 2, 1}, win);
    REQUIRE(dev.to_vector() == cpu.to_vector());

    Tf32Scope strict(false);   // full-fp32 GEMMs: TF32's ~1e-3 logit errors would decide margins, not the kernels
    QuietAttacks quiet;
    const Blobs& data = test_blobs();
    auto model_gpu = trained_mlp_on(gpu);
    Square square(SquareConfig{kBlobEps, 100, 0.8f, 1, ModelMode::Eval});
    Rng rng_cpu(4), rng_gpu(4);
    const AttackResult on_cpu = square.run(trained_mlp(), data.x, data.y, rng_cpu);
    const AttackResult on_gpu = square.run(*model_gpu, data.x.to(gpu), data.y.to(gpu), rng_gpu);
    REQUIRE(on_gpu.pred == on_cpu.pred);
    REQUIRE(on_gpu.queries == on_cpu.queries);
    // The same accepted windows: each coordinate x ± ε, clipped, in either order of rounding.
    REQUIRE(max_abs_difference(on_gpu.x_adv.to_vector(), on_cpu.x_adv.to_vector()) <= 1e-6);
}
