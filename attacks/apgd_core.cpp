#include "attacks/apgd_core.h"

#include <algorithm>
#include <cmath>

#include "attacks/steps.h"

namespace cw::attacks {

ApgdSchedule::ApgdSchedule(int n_iter)
    : first(std::max(static_cast<int>(std::floor(0.22 * n_iter)), 1)),
      shrink(std::max(static_cast<int>(std::floor(0.03 * n_iter)), 1)),
      min(std::max(static_cast<int>(std::floor(0.06 * n_iter)), 1)) {}

std::vector<int> ApgdSchedule::check_iterations(int n_iter) const {
    std::vector<int> out;
    for (int k = first, i = k - 1; i < n_iter; k = std::max(k - shrink, min), i += k) out.push_back(i);
    return out;
}

namespace {
// P(v): project v (in place) onto {||v − x|| ≤ ε_i} ∩ [0,1]^n.
void project(Images& v, const Images& x, const std::vector<float>& eps, Norm norm) {
    if (norm == Norm::Linf) {
        project_linf(v, x, eps);
        return;
    }
    const std::vector<float> d = l2_dist(v, x);
    for (int64_t i = 0; i < x.n; ++i) {
        // x + (v−x)/(||v−x|| + 1e-12)·min(ε, ||v−x||), then the box
        const float scale = std::min(eps[i], d[i]) / (d[i] + 1e-12f);
        for (int64_t j = 0; j < x.dim(); ++j) {
            float& a = v.row(i)[j];
            a = std::min(std::max(x.row(i)[j] + (a - x.row(i)[j]) * scale, 0.f), 1.f);
        }
    }
}

// x0: L∞: x + ε·t/||t||_∞, t ~ U(−1,1); L2: x + ε·t/||t||_2, t ~ N(0, I); then box-clipped.
Images initial_point(const Images& x, const std::vector<float>& eps, Norm norm, Rng& rng) {
    Images t(x.n, x.sample_shape);
    if (norm == Norm::Linf) {
        for (float& v : t.v) v = rng.uniform(-1.f, 1.f);
    } else {
        rng.fill_normal(t.v.data(), t.v.size(), 0.f, 1.f);
    }
    const Images zero(x.n, x.sample_shape);
    const std::vector<float> tn = norm == Norm::Linf ? linf_dist(t, zero) : l2_dist(t, zero);
    Images x0 = x;
    for (int64_t i = 0; i < x.n; ++i) {
        const float scale = norm == Norm::Linf ? eps[i] / tn[i] : eps[i] / (tn[i] + 1e-12f);
        for (int64_t j = 0; j < x.dim(); ++j) x0.row(i)[j] += scale * t.row(i)[j];
    }
    clip_box(x0);
    return x0;
}

// z = P(x_cur + η·sign(g)) (L∞) or P(x_cur + η·g/||g||₂) (L2)
Images ascent_point(const Images& x_cur, const Images& g, const std::vector<float>& eta, const Images& x,
                    const std::vector<float>& eps, Norm norm) {
    Images z = x_cur;
    if (norm == Norm::Linf) {
        sign_step(z, g, eta);
    } else {
        const Images zero(g.n, g.sample_shape);
        const std::vector<float> gn = l2_dist(g, zero);
        for (int64_t i = 0; i < z.n; ++i)
            for (int64_t j = 0; j < z.dim(); ++j) z.row(i)[j] += eta[i] * g.row(i)[j] / (gn[i] + 1e-12f);
    }
    project(z, x, eps, norm);
    return z;
}
}  // namespace

ApgdRunResult apgd_run(ModelOracle& model, const Images& x, const std::vector<int32_t>& y,
                       const std::vector<float>& eps, const Objective& J, const ApgdSettings& s, Rng& rng) {
    const int64_t n = x.n;
    const int N = s.n_iter;
    const ApgdSchedule schedule(N);

    const Images x0 = initial_point(x, eps, s.norm, rng);
    ModelOutput out = model.value_and_grad(x0, J);

    ApgdRunResult r{x0, std::vector<uint8_t>(n)};
    for (int64_t i = 0; i < n; ++i) r.robust[i] = out.pred(i) == y[i];
    Images x_max = x0, g_max = out.grad;   // best-objective point and its gradient
    std::vector<float> L_max = out.value;

    std::vector<float> eta(n);
    for (int64_t i = 0; i < n; ++i) eta[i] = 2 * eps[i];
    Images x_prev = x0, x_cur = x0, g = out.grad;
    int k = schedule.first, counter = 0;
    std::vector<float> L_max_at_last_check = L_max;
    std::vector<uint8_t> reduced_at_last_check(n, 1);
    std::vector<std::vector<float>> loss_hist(N, std::vector<float>(n, 0.f));

    for (int i = 0; i < N; ++i) {
        const float a = i == 0 ? 1.f : 0.75f;   // no momentum on the very first step
        const Images z = ascent_point(x_cur, g, eta, x, eps, s.norm);
        Images x_new = x_cur;
        for (size_t j = 0; j < x_new.v.size(); ++j)
            x_new.v[j] = x_cur.v[j] + a * (z.v[j] - x_cur.v[j]) + (1 - a) * (x_cur.v[j] - x_prev.v[j]);
        project(x_new, x, eps, s.norm);
        x_prev = std::move(x_cur);
        x_cur = std::move(x_new);

        out = model.value_and_grad(x_cur, J);
        g = out.grad;
        std::vector<uint8_t> improved(n), wrong(n);
        for (int64_t b = 0; b < n; ++b) {
            wrong[b] = out.pred(b) != y[b];
            if (wrong[b]) r.robust[b] = 0;
            loss_hist[i][b] = out.value[b];
            improved[b] = out.value[b] > L_max[b];   // strict
            if (improved[b]) L_max[b] = out.value[b];
        }
        copy_rows_where(r.x_best_adv, x_cur, wrong);
        copy_rows_where(x_max, x_cur, improved);
        copy_rows_where(g_max, g, improved);

        if (++counter < k) continue;
        std::vector<uint8_t> reduce(n);
        for (int64_t b = 0; b < n; ++b) {
            // cond1: too few increasing steps in the last k iterations. Index i−c−1 = −1 wraps to the last
            // (still zero) row of the history, as in the reference code (attacks.md §4.3 quirk).
            int n_incr = 0;
            for (int c = 0; c < k; ++c) n_incr += loss_hist[i - c][b] > loss_hist[(i - c - 1 + N) % N][b];
            const bool cond1 = n_incr <= s.rho * k;
            // cond2: step not reduced at the last check and no improvement of the best objective since then.
            const bool cond2 = !reduced_at_last_check[b] && L_max_at_last_check[b] >= L_max[b];
            reduce[b] = cond1 || cond2;
            reduced_at_last_check[b] = reduce[b];
            L_max_at_last_check[b] = L_max[b];
            if (reduce[b]) eta[b] /= 2;
        }
        copy_rows_where(x_cur, x_max, reduce);   // restart from the best point (x_prev is not reset)
        copy_rows_where(g, g_max, reduce);
        k = std::max(k - schedule.shrink, schedule.min);
        counter = 0;
    }
    return r;
}

}  // namespace cw::attacks
