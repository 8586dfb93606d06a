#pragma once
// Closed forms of FRL §3's conceptual example (Xu et al.; docs/protocols/gaussian_theory.md): a two-class Gaussian mixture
// whose class +1 has K times the standard deviation of class -1. Everything rests on one formula, the exact
// class-wise error of a linear classifier f(x) = sign(wᵀx + b) (§2 there); Lemma 1/Theorem 1 (natural optimum) and
// Lemma 2/Theorem 2 (robust optimum at radius ε) are that formula at the minimising w and b, and the tests check
// the two agree.
//
// Class index 0 is y = -1, class index 1 is y = +1 (as in datasets/gaussian_mixture.h).
#include <array>
#include <vector>

#include "datasets/gaussian_mixture.h"

namespace cw::fairness {

struct GaussianTheoryParams {
    data::GaussianMixtureParams data;   // m, d, γ, η, σ, K
    double eps = 0.5;                   // adversarial training radius ε (Lemma 2)
    double eps0 = 0.5;                  // L∞ radius ε₀ the robust errors are measured at
};

// What the theorems assume: m >= 1, d >= 0, γ > 0, σ > 0, K > 1, 0 < η <= ε < γ, ε₀ >= 0, all finite. Throws
// std::invalid_argument with one line naming the first violated parameter and its condition.
void check_admissible(const GaussianTheoryParams& p);

// Φ(z) computed as erfc(-z/√2)/2: relative accuracy in the far left tail (class errors of 1e-12 and below), where
// (1 + erf)/2 would return rounding noise.
double normal_cdf(double z);

// Per class (index 0: y = -1, 1: y = +1).
struct ClassErrors {
    std::array<double, 2> z{};       // z-scores: error = Φ(z)
    std::array<double, 2> error{};
};

// The three numbers a linear classifier's class-wise errors depend on: μ = wᵀθ, ‖w‖₂, ‖w‖₁, plus the bias.
struct LinearSummary {
    double mu = 0, l2 = 0, l1 = 0, b = 0;
};

// f(x) = sign(wᵀx + b) with w over the m robust coordinates first, then the d non-robust ones.
struct LinearClassifier {
    std::vector<double> w;
    double b = 0;
};

LinearSummary summarise(const LinearClassifier& f, const data::GaussianMixtureParams& p);   // any w of length m + d
LinearSummary block_classifier(double a, double c, double b, const data::GaussianMixtureParams& p);  // w = (a·1_m, c·1_d)

// Mean |w_j| over the d non-robust coordinates over mean |w_j| over the m robust ones: η/γ for Lemma 1's w = θ,
// 0 for Lemma 2's w = (1_m, 0_d). NaN when d = 0; throws unless 1 <= m <= w.size().
double nonrobust_weight_ratio(const LinearClassifier& f, int m);

// Spec §2, the one formula: exact class-wise error under the worst L∞ perturbation of radius t (t = 0: clean),
//   R(f,-1) = Φ((b - μ + t‖w‖₁) / (σ‖w‖₂)),   R(f,+1) = Φ((-b - μ + t‖w‖₁) / (Kσ‖w‖₂)).
// For a linear model the worst δ is -y·t·sign(w), so this is exact, not a bound. Throws on w = 0 or t < 0.
ClassErrors classwise_errors(const data::GaussianMixtureParams& p, const LinearSummary& f, double t);

// Constants of the theorems (docs/protocols/gaussian_theory.md §1).
struct GaussianConstants {
    double q = 0;   // 2 ln K / (K² - 1)
    double S = 0;   // mγ² + dη²
    double A = 0;   // 2√S / (σ(K² - 1))
    double B = 0;   // 2√m(γ - ε) / (σ(K² - 1))
};
GaussianConstants constants(const GaussianTheoryParams& p);

// The error-minimising bias for a fixed direction whose class scores have mean ±mean_shift and standard deviation
// σ_y·l2 (the "-" root of φ(u₋) = φ(u₊)/K): b_nat is it at (S, √S), b_adv at (m(γ - ε), √m).
double optimal_bias(double mean_shift, double l2, double sigma, double K);
double b_nat(const GaussianTheoryParams& p);   // Lemma 1, with w = θ
double b_adv(const GaussianTheoryParams& p);   // Lemma 2, with w = (1_m, 0_d)

// The optimal classifiers themselves (Lemma 1: w = θ, b = b_nat; Lemma 2: w = (1_m, 0_d), b = b_adv).
LinearSummary natural_optimum(const GaussianTheoryParams& p);
LinearSummary adversarial_optimum(const GaussianTheoryParams& p);

struct TheoremErrors {
    ClassErrors clean;    // R_nat
    ClassErrors robust;   // R_rob at ε₀
};
TheoremErrors theorem1(const GaussianTheoryParams& p);   // natural optimum f, closed-form z-scores
TheoremErrors theorem2(const GaussianTheoryParams& p);   // robust optimum f_adv, closed-form z-scores

// Corollary 1's ratio of clean-error gaps, Ω = [R_nat(f_adv,+1) - R_nat(f_adv,-1)] / [R_nat(f,+1) - R_nat(f,-1)].
double omega(const ClassErrors& adversarial_clean, const ClassErrors& natural_clean);
double omega(const GaussianTheoryParams& p);

}  // namespace cw::fairness
