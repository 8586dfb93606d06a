#include "attacks/square.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/losses.h"
#include "engine/attack_ops.h"

namespace cw::attacks {

float square_p_schedule(int i, float p_init) {
    static const int bounds[] = {10, 50, 200, 500, 1000, 2000, 4000, 6000, 8000};
    float p = p_init;
    for (int b : bounds)
        if (i > b) p /= 2;
    return p;
}

int square_side(float p, int64_t c, int64_t h, int64_t w) {
    const double n_features = static_cast<double>(c * h * w);
    // std::nearbyint rounds half to even in the default rounding mode, like Python's round().
    const int s = std::max(static_cast<int>(std::nearbyint(std::sqrt(p * n_features / c))), 1);
    return static_cast<int>(std::min<int64_t>(s, std::min(h, w)));
}

Square::Square(SquareConfig c) : Attack(Norm::Linf, c.eps, c.mode), c_(c) {
    if (c_.n_queries < 1 || c_.restarts < 1)
        throw std::invalid_argument("Square: n_queries and restarts must be >= 1");
}

nlohmann::json Square::config() const {
    auto j = base_config("square");
    j["n_queries"] = c_.n_queries;
    j["p_init"] = c_.p_init;
    j["restarts"] = c_.restarts;
    j["loss"] = "margin";
    j["random_start"] = true;
    return j;
}

namespace {
struct Scores {
    std::vector<float> margin;   // z_y − max_{j≠y} z_j
    std::vector<int32_t> pred;   // argmax (misclassified ⇔ margin < 0, or = 0 with a lower-index winner)
};
Scores score(const ModelOutput& out, const std::vector<int32_t>& y) {
    Scores s{std::vector<float>(static_cast<size_t>(out.n)), out.preds()};
    for (int64_t i = 0; i < out.n; ++i) s.margin[i] = margin(out.row(i), out.classes, y[i]);
    return s;
}
}  // namespace

Tensor Square::single_run(ModelOracle& model, const Images& x_host, const Tensor& x, const std::vector<int32_t>& y,
                          const std::vector<float>& eps, std::vector<int64_t>& queries, std::vector<int32_t>& pred,
                          Rng& rng) const {
    const int64_t n = x_host.n, c = x_host.channels(), h = x_host.height(), w = x_host.width();
    const Tensor eps_t = Tensor::from_vector(eps, {n}, model.device());

    // Vertical stripes: one sign per image, channel and column, the same value down the column. Drawn on the host
    // (the random stream is the reference's), then the images stay on the model's device.
    Images stripes = x_host;
    for (int64_t i = 0; i < n; ++i)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t col = 0; col < w; ++col) {
                const float sigma = rng.uniform() < 0.5f ? -eps[i] : eps[i];
                for (int64_t row = 0; row < h; ++row) {
                    float& v = stripes.row(i)[(ch * h + row) * w + col];
                    v = std::min(std::max(v + sigma, 0.f), 1.f);
                }
            }
    Tensor x_best = to_tensor(stripes, model.device());
    Scores best = score(model.forward(x_best), y);
    std::vector<float>& m_best = best.margin;
    std::vector<float> loss_best = m_best;   // loss = margin (AutoAttack's 'margin' loss)
    for (auto& q : queries) ++q;

    // Each iteration: the still-robust images, their window moved on the device, one forward, and the accepted
    // rows written back. Only the logits and the row lists cross between host and device.
    for (int it = 0; it < c_.n_queries; ++it) {
        std::vector<int64_t> idx;
        for (int64_t i = 0; i < n; ++i)
            if (m_best[i] > 0) idx.push_back(i);
        if (idx.empty()) break;

        SquareWindow window;
        window.side = square_side(square_p_schedule(it, c_.p_init), c, h, w);
        // integer in [0, h−s−1] (floor of U·(h−s)); 0 when the window spans the image
        const int64_t s = window.side;
        window.top = h - s > 0 ? static_cast<int64_t>(std::floor(rng.uniform() * (h - s))) : 0;
        window.left = w - s > 0 ? static_cast<int64_t>(std::floor(rng.uniform() * (w - s))) : 0;
        for (int64_t ch = 0; ch < c; ++ch)
            if (rng.uniform() < 0.5f) window.negative_channels |= 1u << ch;

        Tensor x_new = take_rows(x_best, idx);
        square_window_(x_new, x, eps_t, idx, window);
        std::vector<int32_t> y_sub;
        for (int64_t i : idx) y_sub.push_back(y[i]);
        const Scores now = score(model.forward(x_new), y_sub);
        const std::vector<float>& m_new = now.margin;
        std::vector<int64_t> accepted_rows, accepted_new;
        for (size_t k = 0; k < idx.size(); ++k) {
            const int64_t i = idx[k];
            ++queries[i];
            const bool improved = m_new[k] < loss_best[i];
            if (improved) loss_best[i] = m_new[k];
            if (improved || m_new[k] <= 0) {
                m_best[i] = m_new[k];
                best.pred[i] = now.pred[k];
                accepted_rows.push_back(i);
                accepted_new.push_back(static_cast<int64_t>(k));
            }
        }
        if (!accepted_rows.empty()) put_rows_(x_best, accepted_rows, take_rows(x_new, accepted_new));
    }
    pred = best.pred;
    return x_best;
}

Perturbation Square::perturb(AttackContext& ctx) {
    // A random search whose images stay on the model's device; the host draws the windows and makes the decisions.
    const int64_t n = ctx.n();
    Tensor x_adv = ctx.x.clone();
    std::vector<int64_t> queries(static_cast<size_t>(n), 1);   // the clean check is everyone's first query
    const ModelOutput clean = ctx.model.forward(ctx.x);
    std::vector<int32_t> final_pred = clean.preds();   // the prediction at the returned point
    const std::vector<int32_t>& labels = ctx.host_y();
    std::vector<uint8_t> robust(n);
    for (int64_t i = 0; i < n; ++i) robust[i] = clean.pred(i) == labels[i];

    for (int r = 0; r < c_.restarts; ++r) {
        const std::vector<int64_t> idx = where(robust);
        if (idx.empty()) break;
        std::vector<int32_t> y;
        std::vector<float> eps;
        std::vector<int64_t> q;
        for (int64_t i : idx) {
            y.push_back(labels[i]);
            eps.push_back(ctx.eps[i]);
            q.push_back(0);
        }
        std::vector<int32_t> pred;
        const Tensor adv = single_run(ctx.model, take_rows(ctx.host_x(), idx), take_rows(ctx.x, idx), y, eps, q, pred,
                                      ctx.rng);
        // Broken = misclassified at the returned point, known from the query that accepted it (AutoAttack spends
        // one more forward to check; the model is deterministic, so that would repeat this answer).
        std::vector<int64_t> broken_rows, broken_run;
        for (size_t k = 0; k < idx.size(); ++k) {
            queries[idx[k]] += q[k];
            if (pred[k] == y[k]) continue;
            robust[idx[k]] = 0;
            final_pred[idx[k]] = pred[k];
            broken_rows.push_back(idx[k]);
            broken_run.push_back(static_cast<int64_t>(k));
        }
        if (!broken_rows.empty()) put_rows_(x_adv, broken_rows, take_rows(adv, broken_run));
    }
    Perturbation p{x_adv, {}, std::move(queries)};
    p.pred = std::move(final_pred);
    return p;
}

}  // namespace cw::attacks
