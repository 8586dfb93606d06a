#pragma once
// Square attack, L∞ (Andriushchenko et al. 2020), AutoAttack configuration (docs/protocols/attacks.md §6): score-based random
// search. Start from vertical stripes of ±ε, then repeatedly set a random s×s window (one colour sign per
// channel) to x ± ε and keep it if the margin loss drops (or the point becomes misclassified). Gradient-free:
// every model call runs under NoGradGuard.
//
// Window position and colours are drawn once per iteration for the whole batch (AutoAttack's PyTorch port);
// every image still accepts or rejects on its own.
//
// Iterations: exactly `n_queries` after the stripe initialisation, as the reference code runs them (fewer only
// once a sample is broken). Model queries per sample therefore reach n_queries + 2 for a sample that survives:
// the clean check, the initialisation and one per iteration (AutoAttack's figure of "5000 queries" counts the
// iterations). AttackResult::queries reports the forwards each sample actually cost.
#include <string>

#include "attacks/attack.h"

namespace cw::attacks {

struct SquareConfig {
    float eps = 8.f / 255;
    int n_queries = 5000;
    float p_init = 0.8f;
    int restarts = 1;
    ModelMode mode = ModelMode::Eval;
};

// Fraction p of pixels changed at 0-based iteration i (resc_schedule = False): p_init halves after iterations
// 10, 50, 200, 500, 1000, 2000, 4000, 6000, 8000.
float square_p_schedule(int i, float p_init);
// Window side s = max(round(sqrt(p·n_features/c)), 1) capped at min(h, w); round half to even.
int square_side(float p, int64_t c, int64_t h, int64_t w);

class Square : public Attack {
public:
    explicit Square(SquareConfig c);
    std::string name() const override { return "square" + std::to_string(c_.n_queries); }
    nlohmann::json config() const override;

protected:
    Perturbation perturb(AttackContext& ctx) override;

private:
    // One run on samples that are all correctly classified (x_host and x: the same images on the host and on
    // the model's device): returns x_best on the device, counts queries, and sets pred[i] to argmax f(x_best_i)
    // (known from the query that accepted it).
    Tensor single_run(ModelOracle& model, const Images& x_host, const Tensor& x, const std::vector<int32_t>& y,
                      const std::vector<float>& eps, std::vector<int64_t>& queries, std::vector<int32_t>& pred,
                      Rng& rng) const;
    SquareConfig c_;
};

}  // namespace cw::attacks
