#include "attacks/apgd_core.h"

#include <algorithm>
#include <cmath>

#include "attacks/steps.h"
#include "engine/ops.h"

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

std::vector<uint8_t> ApgdRunResult::broken() const {
    std::vector<uint8_t> out;
    for (float r : robust.to_vector()) out.push_back(r == 0.f);
    return out;
}

namespace {
// x0 = x + ε_i·t/||t||: L∞: t ~ U(−1,1), ||·||_∞; L2: t ~ N(0, I), ||·||₂ + 1e-12; then box-clipped.
Tensor initial_point(const Tensor& x, const std::vector<float>& eps, Norm norm, Rng& rng) {
    const int64_t n = x.size(0), dim = values_per_sample(x);
    std::vector<float> t(static_cast<size_t>(n * dim));
    if (norm == Norm::Linf) {
        for (float& v : t) v = rng.uniform(-1.f, 1.f);
    } else {
        rng.fill_normal(t.data(), t.size(), 0.f, 1.f);
    }
    for (int64_t i = 0; i < n; ++i) {
        float* row = t.data() + i * dim;
        double s = 0;
        float m = 0;
        for (int64_t j = 0; j < dim; ++j) {
            s += double(row[j]) * row[j];
            m = std::max(m, std::fabs(row[j]));
        }
        const float scale = norm == Norm::Linf ? eps[i] / m : eps[i] / (static_cast<float>(std::sqrt(s)) + 1e-12f);
        for (int64_t j = 0; j < dim; ++j) row[j] *= scale;
    }
    return perturbed(x, t);
}
}  // namespace

ApgdRunResult apgd_run(ModelOracle& model, const Tensor& x, const std::vector<float>& eps, const Objective& J,
                       const ApgdSettings& s, Rng& rng) {
    return apgd_run_from(model, x, initial_point(x, eps, s.norm, rng), eps, J, s);
}

ApgdRunResult apgd_run_from(ModelOracle& model, const Tensor& x, const Tensor& x0, const std::vector<float>& eps,
                            const Objective& J, const ApgdSettings& s, ApgdTrace* trace) {
    NoGradGuard bookkeeping;
    const int64_t n = x.size(0);
    const int N = s.n_iter;
    const ApgdSchedule schedule(N);
    const AttackNorm norm = s.norm == Norm::Linf ? AttackNorm::Linf : AttackNorm::L2;
    const Device device = x.device();
    const Tensor eps_t = Tensor::from_vector(eps, {n}, device);
    const Tensor zero = Tensor::zeros({n}, DType::F32, device);

    Evaluation e = model.value_and_grad(x0, J);

    ApgdRunResult r{x0, rsub(1.f, e.obj.wrong)};
    Tensor x_max = x0, g_max = e.grad;   // best-objective point and its gradient
    Tensor L_max = e.obj.value;
    Tensor eta = mul(eps_t, 2.f);
    Tensor x_prev = x0, x_cur = x0, g = e.grad;
    int k = schedule.first, counter = 0;
    Tensor L_max_at_last_check = L_max;
    Tensor reduced_at_last_check = Tensor::ones({n}, device);
    // loss_hist[i]: the objective after iteration i, zero until written. Row −1 wraps to the last row, as in the
    // reference code (docs/protocols/attacks.md §4.3 quirk): the first check compares iteration 0 against a still-zero row.
    std::vector<Tensor> loss_hist(static_cast<size_t>(N));
    auto hist = [&](int i) {
        const Tensor& h = loss_hist[static_cast<size_t>((i + N) % N)];
        return h.defined() ? h : zero;
    };

    for (int i = 0; i < N; ++i) {
        const float a = i == 0 ? 1.f : 0.75f;   // no momentum on the very first step
        // z = P(x_cur + η·dir(g)); x_new = P(x_cur + a·(z − x_cur) + (1 − a)·(x_cur − x_prev))
        Tensor z = x_cur.clone();
        attack_step_(norm, z, g, x, eps_t, eta);
        Tensor x_new = add(add(x_cur, mul(sub(z, x_cur), a)), mul(sub(x_cur, x_prev), 1.f - a));
        attack_step_(norm, x_new, Tensor(), x, eps_t, eta);
        x_prev = std::move(x_cur);
        x_cur = std::move(x_new);

        e = model.value_and_grad(x_cur, J);
        g = e.grad;
        r.robust = mul(r.robust, rsub(1.f, e.obj.wrong));
        loss_hist[i] = e.obj.value;
        const Tensor improved = greater(e.obj.value, L_max);   // strict
        L_max = where_rows(improved, e.obj.value, L_max);
        r.x_best_adv = where_rows(e.obj.wrong, x_cur, r.x_best_adv);
        x_max = where_rows(improved, x_cur, x_max);
        g_max = where_rows(improved, g, g_max);

        if (trace) trace->objective.push_back(e.obj.value.to_vector());
        if (++counter < k) {
            if (trace) trace->eta.push_back(eta.to_vector());
            continue;
        }
        // cond1: too few increasing steps in the last k iterations; cond2: the step was not reduced at the last
        // check and the best objective has not improved since then.
        Tensor n_incr = zero;
        for (int c = 0; c < k; ++c) n_incr = add(n_incr, greater(hist(i - c), hist(i - c - 1)));
        const Tensor cond1 = greater_equal(Tensor::scalar(s.rho * static_cast<float>(k), device), n_incr);
        const Tensor cond2 = mul(rsub(1.f, reduced_at_last_check), greater_equal(L_max_at_last_check, L_max));
        const Tensor reduce = maximum(cond1, cond2);
        reduced_at_last_check = reduce;
        L_max_at_last_check = L_max;
        eta = mul(eta, rsub(1.f, mul(reduce, 0.5f)));   // halved where reduced
        x_cur = where_rows(reduce, x_max, x_cur);   // restart from the best point (x_prev is not reset)
        g = where_rows(reduce, g_max, g);
        k = std::max(k - schedule.shrink, schedule.min);
        counter = 0;
        if (trace) trace->eta.push_back(eta.to_vector());
    }
    return r;
}

}  // namespace cw::attacks
