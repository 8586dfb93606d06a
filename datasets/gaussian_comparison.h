#pragma once
// One configuration of FRL's Gaussian example with theory and trained models side by side: the optimal linear
// classifiers' class-wise errors (Theorems 1 and 2) next to the exact class-wise errors of two trained linear
// models (docs/protocols/gaussian_theory.md §2 on their own w and b), their weight ratios and Ω. The rows of
// experiments/gaussian_theory's theory.csv and printed table.
#include <string>
#include <vector>

#include "datasets/gaussian_theory.h"

namespace cw::fairness {

struct ModelErrors {
    ClassErrors clean, robust;   // robust: under the worst L∞ perturbation of radius ε₀
};

struct GaussianComparison {
    std::string sweep;                     // which sweep the row belongs to: "K", "eps" (or a caller's own name)
    GaussianTheoryParams params;
    ModelErrors natural_theory, adversarial_theory;     // f (Lemma 1) and f_adv (Lemma 2)
    ModelErrors natural_trained, adversarial_trained;   // the trained models, exact
    double omega_theory = 0, omega_trained = 0;          // Corollary 1's Ω; for the trained pair the same ratio
    double ratio_natural = 0, ratio_adversarial = 0;     // nonrobust_weight_ratio of the trained models
};

GaussianComparison compare(const std::string& sweep, const GaussianTheoryParams& p, const LinearClassifier& natural,
                           const LinearClassifier& adversarial);

// theory.csv: one row per comparison, errors as fractions.
std::string comparison_csv(const std::vector<GaussianComparison>& rows);
// The headline columns as text cells (header first): percentages, "theory | trained" in each cell. The printed
// table and the HTML page both show these.
std::vector<std::vector<std::string>> comparison_cells(const std::vector<GaussianComparison>& rows);
std::string comparison_text(const std::vector<GaussianComparison>& rows);   // the cells, padded into columns

}  // namespace cw::fairness
