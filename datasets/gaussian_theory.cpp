#include "datasets/gaussian_theory.h"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cw::fairness {

namespace {
std::string num(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

[[noreturn]] void reject(const std::string& condition, const std::string& got) {
    throw std::invalid_argument("gaussian theory: need " + condition + ", got " + got);
}

// K² - 1 as (K - 1)(K + 1): no cancellation for K close to 1.
double k2m1(double K) { return (K - 1) * (K + 1); }
}  // namespace

void check_admissible(const GaussianTheoryParams& p) {
    const data::GaussianMixtureParams& g = p.data;
    // Each condition says why the theory needs it: m >= 1 (Lemma 2 keeps only the robust coordinates), K > 1
    // (class +1 is the noisier one; q(K) is 0/0 at K = 1), η <= ε (the attack cancels a non-robust feature, so
    // Lemma 2 drops it), ε < γ (but not a robust one).
    if (g.m < 1) reject("m >= 1 (robust coordinates)", "m = " + std::to_string(g.m));
    if (g.d < 0) reject("d >= 0 (non-robust coordinates)", "d = " + std::to_string(g.d));
    if (!(g.sigma > 0) || !std::isfinite(g.sigma)) reject("sigma > 0", "sigma = " + num(g.sigma));
    if (!(g.K > 1) || !std::isfinite(g.K)) reject("K > 1 (class +1 has the larger variance)", "K = " + num(g.K));
    if (!std::isfinite(g.gamma) || !std::isfinite(g.eta) || !std::isfinite(p.eps))
        reject("finite gamma, eta, eps", "gamma = " + num(g.gamma) + ", eta = " + num(g.eta) + ", eps = " + num(p.eps));
    if (!(g.eta > 0)) reject("0 < eta <= eps < gamma", "eta = " + num(g.eta));
    if (!(g.eta <= p.eps)) reject("0 < eta <= eps < gamma", "eta = " + num(g.eta) + " > eps = " + num(p.eps));
    if (!(p.eps < g.gamma)) reject("0 < eta <= eps < gamma", "eps = " + num(p.eps) + " >= gamma = " + num(g.gamma));
    if (!(p.eps0 >= 0) || !std::isfinite(p.eps0)) reject("eps0 >= 0 (test radius)", "eps0 = " + num(p.eps0));
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

LinearSummary summarise(const LinearClassifier& f, const data::GaussianMixtureParams& p) {
    if (static_cast<int64_t>(f.w.size()) != p.dim())
        throw std::invalid_argument("gaussian theory: w has " + std::to_string(f.w.size()) + " weights, expected m + d = " +
                                    std::to_string(p.dim()));
    LinearSummary s;
    double sq = 0;
    for (int j = 0; j < p.dim(); ++j) {
        s.mu += f.w[j] * (j < p.m ? p.gamma : p.eta);
        sq += f.w[j] * f.w[j];
        s.l1 += std::fabs(f.w[j]);
    }
    s.l2 = std::sqrt(sq);
    s.b = f.b;
    return s;
}

LinearSummary block_classifier(double a, double c, double b, const data::GaussianMixtureParams& p) {
    return {a * p.m * p.gamma + c * p.d * p.eta, std::sqrt(a * a * p.m + c * c * p.d), std::fabs(a) * p.m + std::fabs(c) * p.d, b};
}

double nonrobust_weight_ratio(const LinearClassifier& f, int m) {
    const int d = int(f.w.size()) - m;
    if (m < 1 || d < 0)
        throw std::invalid_argument("gaussian theory: the weight ratio needs m >= 1 robust weights, got m = " +
                                    std::to_string(m) + " of " + std::to_string(f.w.size()));
    if (d == 0) return std::nan("");
    double robust = 0, nonrobust = 0;
    for (int j = 0; j < m + d; ++j) (j < m ? robust : nonrobust) += std::fabs(f.w[j]);
    return (nonrobust / d) / (robust / m);
}

ClassErrors classwise_errors(const data::GaussianMixtureParams& p, const LinearSummary& f, double t) {
    if (!(f.l2 > 0)) throw std::invalid_argument("gaussian theory: class errors of w = 0 are undefined (need ||w||_2 > 0)");
    if (!(t >= 0)) throw std::invalid_argument("gaussian theory: need attack radius t >= 0, got t = " + num(t));
    ClassErrors e;
    // The score wᵀx + b of class y is N(y·μ + b, σ_y²‖w‖²); the attack moves it by -y·t‖w‖₁ towards the boundary.
    e.z[0] = (f.b - f.mu + t * f.l1) / (p.sigma * f.l2);
    e.z[1] = (-f.b - f.mu + t * f.l1) / (p.K * p.sigma * f.l2);
    for (int k = 0; k < 2; ++k) e.error[k] = normal_cdf(e.z[k]);
    return e;
}

GaussianConstants constants(const GaussianTheoryParams& p) {
    check_admissible(p);
    const data::GaussianMixtureParams& g = p.data;
    GaussianConstants c;
    c.q = 2 * std::log(g.K) / k2m1(g.K);
    c.S = g.m * g.gamma * g.gamma + g.d * g.eta * g.eta;
    c.A = 2 * std::sqrt(c.S) / (g.sigma * k2m1(g.K));
    c.B = 2 * std::sqrt(double(g.m)) * (g.gamma - p.eps) / (g.sigma * k2m1(g.K));
    return c;
}

double optimal_bias(double mean_shift, double l2, double sigma, double K) {
    if (!(mean_shift > 0) || !(l2 > 0) || !(sigma > 0) || !(K > 1))
        throw std::invalid_argument("gaussian theory: optimal bias needs mean shift > 0, ||w|| > 0, sigma > 0, K > 1");
    const double q = 2 * std::log(K) / k2m1(K);
    const double P = mean_shift * (K * K + 1) / k2m1(K);
    const double Q = K * std::sqrt(4 * mean_shift * mean_shift / (k2m1(K) * k2m1(K)) + sigma * sigma * l2 * l2 * q);
    // b = P - Q, written as (P² - Q²)/(P + Q): P and Q both grow like 1/(K - 1) while b stays bounded, so the plain
    // difference loses digits as K -> 1. P² - Q² simplifies because (K²+1)² - 4K² = (K²-1)².
    return (mean_shift * mean_shift - K * K * sigma * sigma * l2 * l2 * q) / (P + Q);
}

double b_nat(const GaussianTheoryParams& p) {
    const GaussianConstants c = constants(p);
    return optimal_bias(c.S, std::sqrt(c.S), p.data.sigma, p.data.K);
}

double b_adv(const GaussianTheoryParams& p) {
    check_admissible(p);
    const data::GaussianMixtureParams& g = p.data;
    return optimal_bias(g.m * (g.gamma - p.eps), std::sqrt(double(g.m)), g.sigma, g.K);
}

LinearSummary natural_optimum(const GaussianTheoryParams& p) {
    return block_classifier(p.data.gamma, p.data.eta, b_nat(p), p.data);   // w = θ
}

LinearSummary adversarial_optimum(const GaussianTheoryParams& p) {
    return block_classifier(1.0, 0.0, b_adv(p), p.data);
}

namespace {
ClassErrors from_z(double z_minus, double z_plus) {
    ClassErrors e;
    e.z = {z_minus, z_plus};
    for (int k = 0; k < 2; ++k) e.error[k] = normal_cdf(e.z[k]);
    return e;
}
}  // namespace

TheoremErrors theorem1(const GaussianTheoryParams& p) {
    const GaussianConstants c = constants(p);
    const data::GaussianMixtureParams& g = p.data;
    const double K = g.K, root = std::sqrt(c.A * c.A + c.q);
    TheoremErrors t;
    t.clean = from_z(c.A - K * root, -K * c.A + root);
    // ‖θ‖₁/‖θ‖₂ = (mγ + dη)/√S: the natural model spreads its weight over all d non-robust coordinates, so an ε₀
    // attack moves its score by about ε₀√d/σ standard deviations.
    const double shift = p.eps0 * (g.m * g.gamma + g.d * g.eta) / (g.sigma * std::sqrt(c.S));
    t.robust = from_z(t.clean.z[0] + shift, t.clean.z[1] + shift / K);
    return t;
}

TheoremErrors theorem2(const GaussianTheoryParams& p) {
    const GaussianConstants c = constants(p);
    const data::GaussianMixtureParams& g = p.data;
    const double K = g.K, root = std::sqrt(c.B * c.B + c.q);
    const double unit = std::sqrt(double(g.m)) / g.sigma;   // ‖w‖₁/(σ‖w‖₂) for w = (1_m, 0_d)
    TheoremErrors t;
    // f_adv was fitted to inputs pushed ε towards the boundary; clean inputs sit √m·ε/σ_y further from it.
    t.clean = from_z(c.B - K * root - unit * p.eps, -K * c.B + root - unit * p.eps / K);
    t.robust = from_z(t.clean.z[0] + unit * p.eps0, t.clean.z[1] + unit * p.eps0 / K);
    return t;
}

double omega(const ClassErrors& adversarial_clean, const ClassErrors& natural_clean) {
    return (adversarial_clean.error[1] - adversarial_clean.error[0]) / (natural_clean.error[1] - natural_clean.error[0]);
}

double omega(const GaussianTheoryParams& p) { return omega(theorem2(p).clean, theorem1(p).clean); }

}  // namespace cw::fairness
