#pragma once
// Linear classifiers f(x) = sign(wᵀx + b) trained on FRL's Gaussian mixture (datasets/gaussian_mixture.h) with the
// engine's autodiff: the trained side of experiments/gaussian_theory. Natural training, or adversarial training at
// radius ε; for a linear model the inner maximisation of adversarial training has an exact answer,
// δ* = -y·ε·sign(w) (one FGSM step is the optimum), so that is used instead of PGD.
//
// Loss. FRL §3 minimises the 0-1 error Pr(f(x) ≠ y), which has no gradient. The default is its smooth version,
// the sigmoid loss σ(-y(wᵀx + b)): as ‖w‖ grows it tends to the 0-1 error, so its minimiser tends to the paper's
// optimum, bias included. The logistic loss log(1 + e^{-y(wᵀx+b)}) (the binary cross-entropy) is convex and has
// the same optimal direction (at a fixed ‖w‖ any loss decreasing in the margin prefers a larger wᵀθ, and once
// η <= ε a non-robust weight only adds variance), but a different bias: on G1 its population optimum under attack
// has robust class errors 10.3% / 17.2% where Theorem 2 has 7.3% / 19.7%, a visibly smaller gap. The sigmoid
// loss is not convex and goes flat where the attack wins on nearly every sample (ε close to γ), where the logistic
// loss still trains.
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/gaussian_mixture.h"
#include "engine/device.h"
#include "eval/eval_records.h"
#include "datasets/gaussian_theory.h"

namespace cw::train {

enum class LinearLoss { Sigmoid, Logistic };
LinearLoss parse_linear_loss(const std::string& name);   // "sigmoid" | "logistic"; throws naming the choices

struct LinearTrainOptions {
    bool adversarial = false;
    double eps = 0;              // training radius (adversarial training only)
    LinearLoss loss = LinearLoss::Sigmoid;
    int64_t epochs = 20;
    int64_t batch_size = 128;
    double lr = 0.05;            // weights: SGD, momentum 0.9, cosine to 0 (the last iterate settles)
    double bias_lr = 0.01;       // bias: Adam, same schedule (see the .cpp for why the bias gets its own optimiser)
    uint64_t seed = 0;           // batch order
    Device device = Device::cpu();
};

struct LinearTrainResult {
    fairness::LinearClassifier model;
    std::vector<double> epoch_loss;   // mean training loss (on the perturbed inputs when adversarial)
    double seconds = 0;
};

LinearTrainResult train_linear(const data::GaussianSamples& train, const LinearTrainOptions& options);

// Per-sample records of f on `test`: the clean prediction and the prediction under the exact worst-case L∞
// perturbation of radius eps0 (recorded under `attack_name`), class index 0 = y -1, 1 = y +1. A clean-wrong
// sample keeps its clean prediction (AutoAttack's counting, eval/eval_records.h).
eval::EvalRecords linear_records(const fairness::LinearClassifier& f, const data::GaussianSamples& test, double eps0,
                                 const std::string& attack_name);

}  // namespace cw::train
