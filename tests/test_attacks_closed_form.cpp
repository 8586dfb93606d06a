// FGSM, FGSM-RS and PGD (untargeted and targeted) on a linear model, whose input gradient is known in closed form:
//   z = W x + b,  ∇_x CE(z, y) = Wᵀ (softmax(z) − onehot(y)).
// The expected x_adv is computed here from docs/protocols/attacks.md (§1, §2.1, §2.2) — sign step (L∞) or normalised step (L2),
// projection onto the sample's ε-ball, then the box clip — for every step rule, every start, per-sample ε
// including 0, one and two steps, and compared element by element with what Attack::run returns.
//
// Random starts are reproduced from the same seeded cw::Rng in the documented draw order (attacks/steps.h):
//   uniform L∞ start: rng.uniform(−ε_i, ε_i) per element, sample-major (also for ε_i = 0);
//   uniform L2 start: per sample, rng.fill_normal over the sample's values, then one rng.uniform() for the radius;
//   normal start:     σ·rng.normal() per element, sample-major.
// An untargeted PGD / FGSM-RS draws nothing before its start. These tests depend on that order: an attack that
// draws its noise differently (e.g. on the device) must keep it, or these references must change with it.
#include <algorithm>
#include <cmath>

#include "attacks/fgsm.h"
#include "attacks/fgsm_rs.h"
#include "attacks/pgd.h"
#include "attacks/registry.h"
#include "tests/test_attacks_fixture.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw_test;

namespace {

constexpr int kN = 5, kC = 3;
const Shape kSample = {2, 2, 3};
constexpr int kD = 12;
constexpr int kDeadInput = 5;   // W's column 5 is zero: ∂CE/∂x_5 = 0 exactly, and sign(0) = 0 must not move it

using Rows = std::vector<std::vector<double>>;   // [sample][value]

struct LinearProblem {
    std::vector<float> w, b;       // W [C, D] (PyTorch's Linear layout), b [C]
    std::vector<float> x;          // [N, D] in [0, 1], with values at and near both ends of the box
    std::vector<int32_t> y;
    std::shared_ptr<nn::Sequential> model;
    Tensor images, labels;
};

const LinearProblem& problem() {
    static const LinearProblem p = [] {
        LinearProblem q;
        Rng rng(2718);
        for (int k = 0; k < kC; ++k)
            for (int j = 0; j < kD; ++j) q.w.push_back(j == kDeadInput ? 0.f : rng.uniform(-1.f, 1.f));
        for (int k = 0; k < kC; ++k) q.b.push_back(rng.uniform(-0.5f, 0.5f));
        for (int i = 0; i < kN * kD; ++i) q.x.push_back(rng.uniform());
        // the box clip must matter: values on and just inside both ends
        q.x[0] = 0.f, q.x[1] = 1.f, q.x[13] = 0.01f, q.x[14] = 0.99f, q.x[26] = 0.f, q.x[40] = 1.f, q.x[55] = 0.005f;
        q.y = {0, 2, 1, 1, 0};
        Rng init(1);
        auto linear = std::make_shared<nn::Linear>(kD, kC, true, init);
        linear->weight.copy_from(Tensor::from_vector(q.w, {kC, kD}));
        linear->bias->copy_from(Tensor::from_vector(q.b, {kC}));
        q.model = std::make_shared<nn::Sequential>(
            std::initializer_list<nn::ModulePtr>{std::make_shared<nn::Flatten>(), linear});
        q.model->eval();
        Shape shape = {kN};
        shape.insert(shape.end(), kSample.begin(), kSample.end());
        q.images = Tensor::from_vector(q.x, shape);
        q.labels = Tensor::from_labels(q.y);
        return q;
    }();
    return p;
}

Rows clean_rows() {
    const auto& p = problem();
    Rows r(kN, std::vector<double>(kD));
    for (int i = 0; i < kN; ++i)
        for (int j = 0; j < kD; ++j) r[i][j] = p.x[i * kD + j];
    return r;
}

// How often the reference's clips changed a value, over the whole file: proves the cases exercise them.
struct ClipCounts {
    int ball = 0, box = 0;
};
ClipCounts& clip_counts() {
    static ClipCounts c;
    return c;
}

double clip_box(double v) {
    const double c = std::min(std::max(v, 0.0), 1.0);
    if (c != v) ++clip_counts().box;
    return c;
}

// Wᵀ (softmax(W a + b) − onehot(y)) for every sample (y: the labels, or a targeted attack's targets), in
// double. Every non-dead component must be well away from 0 (relative to the row's largest), so that float
// rounding in the engine cannot flip a sign.
Rows ce_input_gradient(const Rows& a, const std::vector<int32_t>& y) {
    const auto& p = problem();
    Rows g(kN, std::vector<double>(kD, 0.0));
    for (int i = 0; i < kN; ++i) {
        double z[kC], zmax = -1e300, sum = 0;
        for (int k = 0; k < kC; ++k) {
            z[k] = p.b[k];
            for (int j = 0; j < kD; ++j) z[k] += double(p.w[k * kD + j]) * a[i][j];
            zmax = std::max(zmax, z[k]);
        }
        for (int k = 0; k < kC; ++k) sum += std::exp(z[k] - zmax);
        for (int k = 0; k < kC; ++k) {
            const double e = std::exp(z[k] - zmax) / sum - (k == y[i] ? 1.0 : 0.0);
            for (int j = 0; j < kD; ++j) g[i][j] += double(p.w[k * kD + j]) * e;
        }
        double gmax = 0;
        for (double v : g[i]) gmax = std::max(gmax, std::fabs(v));
        for (int j = 0; j < kD; ++j) {
            if (j == kDeadInput) continue;
            INFO("fixture: gradient component " << j << " of sample " << i << " is " << g[i][j]);
            REQUIRE(std::fabs(g[i][j]) > 1e-4 * gmax);
        }
    }
    return g;
}

double sign(double v) { return (v > 0) - (v < 0); }

double l2(const std::vector<double>& v) {
    double s = 0;
    for (double e : v) s += e * e;
    return std::sqrt(s);
}

// One attack step from `a` (docs/protocols/attacks.md §2.1 / §2.2 / §2.3): step up the CE of the labels (untargeted) or down
// the CE of the targets, ball projection around x, then the box.
void step(Rows& a, const Rows& x, const std::vector<double>& eps, const std::vector<double>& alpha, Norm norm,
          const std::vector<int32_t>& targets = {}) {
    const Rows g = ce_input_gradient(a, targets.empty() ? problem().y : targets);
    const double dir = targets.empty() ? 1.0 : -1.0;
    for (int i = 0; i < kN; ++i) {
        std::vector<double> d(kD);
        const double gn = l2(g[i]);
        for (int j = 0; j < kD; ++j)
            d[j] = a[i][j] - x[i][j] + dir * alpha[i] * (norm == Norm::Linf ? sign(g[i][j]) : g[i][j] / (gn + 1e-10));
        if (norm == Norm::Linf) {
            for (double& v : d) {
                const double c = std::min(std::max(v, -eps[i]), eps[i]);
                if (c != v) ++clip_counts().ball;
                v = c;
            }
        } else {
            const double dn = l2(d);
            if (dn > eps[i]) {
                ++clip_counts().ball;
                for (double& v : d) v *= eps[i] / dn;
            }
        }
        for (int j = 0; j < kD; ++j) a[i][j] = clip_box(x[i][j] + d[j]);
    }
}

Rows uniform_linf_start(const Rows& x, const std::vector<double>& eps, Rng& rng) {
    Rows a = x;
    for (int i = 0; i < kN; ++i)
        for (int j = 0; j < kD; ++j)
            a[i][j] = clip_box(x[i][j] + rng.uniform(-static_cast<float>(eps[i]), static_cast<float>(eps[i])));
    return a;
}

Rows uniform_radius_l2_start(const Rows& x, const std::vector<double>& eps, Rng& rng) {
    Rows a = x;
    for (int i = 0; i < kN; ++i) {
        std::vector<float> n(kD);
        rng.fill_normal(n.data(), n.size(), 0.f, 1.f);
        std::vector<double> nd(n.begin(), n.end());
        const double r = rng.uniform();
        for (int j = 0; j < kD; ++j) a[i][j] = clip_box(x[i][j] + nd[j] * r * eps[i] / l2(nd));
    }
    return a;
}

Rows normal_start(const Rows& x, double sigma, Rng& rng) {
    Rows a = x;
    for (int i = 0; i < kN; ++i)
        for (int j = 0; j < kD; ++j) a[i][j] = clip_box(x[i][j] + sigma * rng.normal());
    return a;
}

std::vector<double> step_sizes(StepRule rule, double alpha, const std::vector<double>& eps) {
    std::vector<double> out(eps.size(), alpha);
    if (rule == StepRule::QuarterEps)
        for (size_t i = 0; i < eps.size(); ++i) out[i] = eps[i] / 4;
    if (rule == StepRule::BatchMaxQuarterEps)
        std::fill(out.begin(), out.end(), *std::max_element(eps.begin(), eps.end()) / 4);
    return out;
}

// The float ε the attack sees, widened: the reference works with exactly the same radii.
std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

void require_matches(const AttackResult& r, const Rows& want, const std::string& what) {
    INFO(what);
    const std::vector<float> got = r.x_adv.to_vector();
    REQUIRE(r.x_adv.shape() == problem().images.shape());
    for (int i = 0; i < kN; ++i)
        for (int j = 0; j < kD; ++j) {
            INFO("sample " << i << " value " << j << ": got " << got[i * kD + j] << ", want " << want[i][j]);
            // float vs double arithmetic of the same formulas: a few ulps
            REQUIRE(std::fabs(double(got[i * kD + j]) - want[i][j]) <= 2e-6);
        }
}

const char* rule_text(StepRule r) {
    return r == StepRule::Fixed ? "fixed" : r == StepRule::QuarterEps ? "eps/4" : "max eps/4";
}
const char* start_text(RandomStart s) {
    return s == RandomStart::None ? "none" : s == RandomStart::Uniform ? "uniform" : "normal";
}

const std::vector<float> kLinfEps = {0.f, 0.02f, 0.05f, 0.1f, 0.03f};
const std::vector<float> kL2Eps = {0.f, 0.1f, 0.3f, 0.5f, 0.2f};

}  // namespace

TEST_CASE("closed form: FGSM on a linear model is clip_box(x + eps_i sign(W^T (softmax(z) - onehot(y))))",
          "[attacks]") {
    QuietAttacks quiet;
    const auto& p = problem();
    const Rows x = clean_rows();
    const Rows g = ce_input_gradient(x, p.y);
    AttackOptions o;
    o.eps = 0.05f;
    auto fgsm = make_attack("fgsm", o);
    for (const std::vector<float>& eps : {std::vector<float>(kN, 0.05f), kLinfEps}) {
        const PerSample ps{eps, {}, {}};
        Rng rng(3);
        const AttackResult r = fgsm->run(*p.model, p.images, p.labels, rng, ps);
        Rows want = x;
        for (int i = 0; i < kN; ++i)
            for (int j = 0; j < kD; ++j) want[i][j] = clip_box(x[i][j] + double(eps[i]) * sign(g[i][j]));
        require_matches(r, want, "fgsm, eps[1] = " + std::to_string(eps[1]));
        // sign(0) = 0: the input W ignores never moves; ε = 0 never moves
        for (int i = 0; i < kN; ++i) REQUIRE(r.x_adv.to_vector()[i * kD + kDeadInput] == p.x[i * kD + kDeadInput]);
    }
}

TEST_CASE("closed form: FGSM-RS on a linear model (uniform start, alpha = 1.25 eps_i or per-sample alpha)",
          "[attacks]") {
    QuietAttacks quiet;
    const auto& p = problem();
    const Rows x = clean_rows();
    for (bool own_alpha : {false, true}) {
        const PerSample ps{kLinfEps, own_alpha ? std::vector<float>{0.01f, 0.01f, 0.04f, 0.2f, 0.f} : std::vector<float>{},
                           {}};
        FgsmRs attack(FgsmRsConfig{0.05f, 1.25f, ModelMode::Eval});
        Rng rng(21), mirror(21);
        const AttackResult r = attack.run(*p.model, p.images, p.labels, rng, ps);

        const std::vector<double> eps = widen(ps.eps);
        std::vector<double> alpha;
        for (size_t i = 0; i < kN; ++i) alpha.push_back(own_alpha ? double(ps.alpha[i]) : double(1.25f * ps.eps[i]));
        Rows want = uniform_linf_start(x, eps, mirror);
        step(want, x, eps, alpha, Norm::Linf);
        require_matches(r, want, own_alpha ? "fgsm-rs, per-sample alpha" : "fgsm-rs, alpha = 1.25 eps");
    }
}

TEST_CASE("closed form: PGD on a linear model, every step rule, start and norm, 1 and 2 steps, per-sample eps",
          "[attacks]") {
    QuietAttacks quiet;
    const auto& p = problem();
    const Rows x = clean_rows();
    int cases = 0;
    for (Norm norm : {Norm::Linf, Norm::L2}) {
        const float eps = norm == Norm::Linf ? 0.05f : 0.3f, alpha = norm == Norm::Linf ? 0.02f : 0.15f;
        for (bool per_sample : {false, true})
            for (int steps : {1, 2})
                for (StepRule rule : {StepRule::Fixed, StepRule::QuarterEps, StepRule::BatchMaxQuarterEps})
                    for (RandomStart start : {RandomStart::None, RandomStart::Uniform, RandomStart::Normal}) {
                        PgdConfig c;
                        c.norm = norm;
                        c.eps = eps;
                        c.alpha = alpha;
                        c.steps = steps;
                        c.start = start;
                        c.start_sigma = 0.01f;
                        c.step_rule = rule;
                        Pgd pgd(c);
                        const PerSample ps{per_sample ? (norm == Norm::Linf ? kLinfEps : kL2Eps) : std::vector<float>{},
                                           {}, {}};
                        Rng rng(99), mirror(99);
                        const AttackResult r = pgd.run(*p.model, p.images, p.labels, rng, ps);

                        const std::vector<double> e = per_sample ? widen(ps.eps) : std::vector<double>(kN, eps);
                        Rows want = x;
                        if (start == RandomStart::Uniform)
                            want = norm == Norm::Linf ? uniform_linf_start(x, e, mirror)
                                                      : uniform_radius_l2_start(x, e, mirror);
                        if (start == RandomStart::Normal) want = normal_start(x, double(c.start_sigma), mirror);
                        for (int k = 0; k < steps; ++k) step(want, x, e, step_sizes(rule, alpha, e), norm);
                        require_matches(r, want,
                                        std::string(norm_name(norm)) + " steps " + std::to_string(steps) +
                                            " rule " + rule_text(rule) + " start " + start_text(start) +
                                            (per_sample ? " per-sample eps" : " one eps"));
                        ++cases;
                    }
    }
    REQUIRE(cases == 72);
    // the cases did exercise both clips
    REQUIRE(clip_counts().ball > 0);
    REQUIRE(clip_counts().box > 0);
}

TEST_CASE("closed form: the registry's pgd<K> and pgd<K>-l2 are uniform-start, fixed-step PGD", "[attacks]") {
    QuietAttacks quiet;
    const auto& p = problem();
    const Rows x = clean_rows();
    AttackOptions o;
    o.eps = 0.05f;
    o.alpha = 0.02f;
    o.eps_l2 = 0.3f;
    o.alpha_l2 = 0.15f;
    for (const std::string name : {"pgd2", "pgd2-l2"}) {
        const Norm norm = name == "pgd2" ? Norm::Linf : Norm::L2;
        auto attack = make_attack(name, o);
        Rng rng(5), mirror(5);
        const AttackResult r = attack->run(*p.model, p.images, p.labels, rng);
        const std::vector<double> e(kN, norm == Norm::Linf ? o.eps : o.eps_l2);
        const std::vector<double> a(kN, norm == Norm::Linf ? o.alpha : o.alpha_l2);
        Rows want = norm == Norm::Linf ? uniform_linf_start(x, e, mirror) : uniform_radius_l2_start(x, e, mirror);
        for (int k = 0; k < 2; ++k) step(want, x, e, a, norm);
        require_matches(r, want, name);
    }
}

TEST_CASE("closed form: targeted FGSM and PGD descend the CE of the given targets", "[attacks]") {
    QuietAttacks quiet;
    const auto& p = problem();
    const Rows x = clean_rows();
    const std::vector<int32_t> targets = {1, 0, 2, 0, 2};   // t_i ≠ y_i
    {
        Fgsm fgsm(FgsmConfig{0.05f, true, ModelMode::Eval});
        const PerSample ps{kLinfEps, {}, targets};
        Rng rng(4);
        const AttackResult r = fgsm.run(*p.model, p.images, p.labels, rng, ps);
        const Rows g = ce_input_gradient(x, targets);
        Rows want = x;
        for (int i = 0; i < kN; ++i)
            for (int j = 0; j < kD; ++j) want[i][j] = clip_box(x[i][j] - double(kLinfEps[i]) * sign(g[i][j]));
        require_matches(r, want, "fgsm-targeted");
        REQUIRE(r.targets == targets);
    }
    for (Norm norm : {Norm::Linf, Norm::L2}) {
        PgdConfig c;
        c.norm = norm;
        c.eps = norm == Norm::Linf ? 0.05f : 0.3f;
        c.alpha = norm == Norm::Linf ? 0.02f : 0.15f;
        c.steps = 2;
        c.start = RandomStart::None;
        c.targeted = true;
        Pgd pgd(c);
        const PerSample ps{norm == Norm::Linf ? kLinfEps : kL2Eps, {}, targets};
        Rng rng(4);
        const AttackResult r = pgd.run(*p.model, p.images, p.labels, rng, ps);
        const std::vector<double> e = widen(ps.eps), a(kN, c.alpha);
        Rows want = x;
        for (int k = 0; k < 2; ++k) step(want, x, e, a, norm, targets);
        require_matches(r, want, std::string("pgd2-targeted ") + norm_name(norm));
    }
}
