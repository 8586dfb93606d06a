#pragma once
// experiments/gaussian_theory's trained models (FRL §3, docs/protocols/xu_experiments.md §3) as study jobs
// (study/work.h): for each K of the K sweep a natural linear model f and an adversarial one f_adv at the training
// radius ε, and for each ε of the ε sweep an f_adv at the base K. Each job samples its K's training and test sets
// from the seed (the same samples for every model of that K and seed), trains one linear model with the engine
// (train/gaussian_linear.h) and writes into its folder results.json, records.csv and model.json (written last: the
// job has finished when it exists). The closed forms and the comparison come after the jobs, in the binary's
// summary.
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/gaussian_theory.h"
#include "study/work.h"

namespace cw::protocols {

// FRL states no numbers; the defaults are the headline example G1 (docs/protocols/gaussian_theory.md §5).
struct GaussianConfig {
    int m = 10;                 // robust features, mean ±γ
    int d = 1000;               // non-robust features, mean ±η; d ≫ m
    double gamma = 1.0;
    double eta = 0.1;
    double sigma = 1.0;         // standard deviation of class -1
    double K = 2.0;             // class +1 has standard deviation K·σ, K > 1
    double eps = 0.5;           // adversarial training radius, η <= ε < γ
    double eps0 = 0.5;          // L∞ radius of the robust errors
    std::string k_sweep = "1.25,1.5,2,3,4";
    // Training radii; every model is tested at ε₀. Stops short of γ: near it the attack wins on almost every
    // sample, the sigmoid loss goes flat and the trained model keeps non-robust weights (--loss logistic trains
    // there).
    std::string eps_sweep = "0.1,0.3,0.5,0.7";
    int64_t samples = 20000;    // training samples per model (≫ m + d, so the weights are estimated, not memorised)
    int64_t test_samples = 10000;
    std::string loss = "sigmoid";
    int64_t batch_size = 128;
    double lr = 0.05;           // weights: SGD (momentum 0.9), cosine to 0; epochs: --epochs
    double bias_lr = 0.01;      // bias: Adam, same schedule
};

fairness::GaussianTheoryParams base_params(const GaussianConfig& c);

// The one place that says what a sweep point means: "K" sweeps K, "eps" the training radius (ε₀ stays fixed).
fairness::GaussianTheoryParams sweep_point(const GaussianConfig& c, const std::string& sweep, double x);

// A comma-separated sweep, sorted, repeats dropped; throws naming `flag` on a value that is not a number.
std::vector<double> parse_sweep(const std::string& flag, const std::string& text);

// Checks the base configuration and every sweep point (one line naming the sweep and the value) and the sizes.
void check_config(const GaussianConfig& c);

// A number as the model names print it ("1.5", "2").
std::string tag(double v);

struct GaussianModel {
    std::string name;           // "K2_natural", "K2_eps0.5_adversarial": the job's arm
    double K = 0;
    bool adversarial = false;
    double eps = 0;             // the training radius (adversarial)
};

// "K2_natural", "K2_eps0.5_adversarial": a model's name, its job's id and folder.
std::string model_name(double K, bool adversarial, double eps = 0);

// Every model the sweeps need, K by K (natural first), each once.
std::vector<GaussianModel> gaussian_models(const GaussianConfig& c);

// The job that trains `model` (see above).
study::Work model_work(const GaussianConfig& c, const GaussianModel& model);

// A finished job's trained classifier, from <dir>/model.json.
fairness::LinearClassifier load_model(const std::string& dir);

}  // namespace cw::protocols
