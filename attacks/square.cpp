#include "attacks/square.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/losses.h"

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

Images Square::single_run(ModelOracle& model, const Images& x, const std::vector<int32_t>& y,
                          const std::vector<float>& eps, std::vector<int64_t>& queries,
                          std::vector<int32_t>& pred, Rng& rng) const {
    const int64_t n = x.n, c = x.channels(), h = x.height(), w = x.width();

    // Vertical stripes: one sign per image, channel and column, the same value down the column.
    Images x_best = x;
    for (int64_t i = 0; i < n; ++i)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t col = 0; col < w; ++col) {
                const float sigma = rng.uniform() < 0.5f ? -eps[i] : eps[i];
                for (int64_t row = 0; row < h; ++row) {
                    float& v = x_best.row(i)[(ch * h + row) * w + col];
                    v = std::min(std::max(v + sigma, 0.f), 1.f);
                }
            }
    Scores best = score(model.forward(x_best), y);
    std::vector<float>& m_best = best.margin;
    std::vector<float> loss_best = m_best;   // loss = margin (AutoAttack's 'margin' loss)
    for (auto& q : queries) ++q;

    for (int it = 0; it < c_.n_queries; ++it) {
        std::vector<int64_t> idx;
        for (int64_t i = 0; i < n; ++i)
            if (m_best[i] > 0) idx.push_back(i);
        if (idx.empty()) break;

        const int s = square_side(square_p_schedule(it, c_.p_init), c, h, w);
        // integer in [0, h−s−1] (floor of U·(h−s)); 0 when the window spans the image
        const int64_t vh = h - s > 0 ? static_cast<int64_t>(std::floor(rng.uniform() * (h - s))) : 0;
        const int64_t vw = w - s > 0 ? static_cast<int64_t>(std::floor(rng.uniform() * (w - s))) : 0;
        std::vector<float> colour(static_cast<size_t>(c));
        for (auto& col : colour) col = rng.uniform() < 0.5f ? -1.f : 1.f;

        Images x_new = take_rows(x_best, idx);
        for (size_t k = 0; k < idx.size(); ++k) {
            const int64_t i = idx[k];
            float* a = x_new.row(static_cast<int64_t>(k));
            const float* clean = x.row(i);
            for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t row = vh; row < vh + s; ++row)
                    for (int64_t col = vw; col < vw + s; ++col) {
                        const int64_t j = (ch * h + row) * w + col;
                        // x_best + 2ε·σ_c, projected to the ε-ball and the box: the window becomes x ± ε
                        const float v = std::min(std::max(a[j] + 2 * eps[i] * colour[ch], clean[j] - eps[i]),
                                                 clean[j] + eps[i]);
                        a[j] = std::min(std::max(v, 0.f), 1.f);
                    }
        }
        std::vector<int32_t> y_sub;
        for (int64_t i : idx) y_sub.push_back(y[i]);
        const Scores now = score(model.forward(x_new), y_sub);
        const std::vector<float>& m_new = now.margin;
        for (size_t k = 0; k < idx.size(); ++k) {
            const int64_t i = idx[k];
            ++queries[i];
            const bool improved = m_new[k] < loss_best[i];
            if (improved) loss_best[i] = m_new[k];
            if (improved || m_new[k] <= 0) {
                m_best[i] = m_new[k];
                best.pred[i] = now.pred[k];
                std::copy(x_new.row(static_cast<int64_t>(k)), x_new.row(static_cast<int64_t>(k)) + x.dim(),
                          x_best.row(i));
            }
        }
    }
    pred = best.pred;
    return x_best;
}

Perturbation Square::perturb(AttackContext& ctx) {
    // A host-side random search: the images cross to the host once and back once.
    const Images& x = ctx.host_x();
    const int64_t n = x.n;
    Images x_adv = x;
    std::vector<int64_t> queries(static_cast<size_t>(n), 1);   // the clean check is everyone's first query
    const ModelOutput clean = ctx.model.forward(x);
    std::vector<int32_t> final_pred = clean.preds();   // the prediction at the returned point
    std::vector<uint8_t> robust(n);
    for (int64_t i = 0; i < n; ++i) robust[i] = clean.pred(i) == ctx.y[i];

    for (int r = 0; r < c_.restarts; ++r) {
        const std::vector<int64_t> idx = where(robust);
        if (idx.empty()) break;
        std::vector<int32_t> y;
        std::vector<float> eps;
        std::vector<int64_t> q;
        for (int64_t i : idx) {
            y.push_back(ctx.y[i]);
            eps.push_back(ctx.eps[i]);
            q.push_back(0);
        }
        std::vector<int32_t> pred;
        const Images adv = single_run(ctx.model, take_rows(x, idx), y, eps, q, pred, ctx.rng);
        // Broken = misclassified at the returned point, known from the query that accepted it (AutoAttack spends
        // one more forward to check; the model is deterministic, so that would repeat this answer).
        for (size_t k = 0; k < idx.size(); ++k) {
            queries[idx[k]] += q[k];
            if (pred[k] == y[k]) continue;
            robust[idx[k]] = 0;
            final_pred[idx[k]] = pred[k];
            std::copy(adv.row(static_cast<int64_t>(k)), adv.row(static_cast<int64_t>(k)) + adv.dim(),
                      x_adv.row(idx[k]));
        }
    }
    Perturbation p{to_tensor(x_adv, ctx.device()), {}, std::move(queries)};
    p.pred = std::move(final_pred);
    return p;
}

}  // namespace cw::attacks
