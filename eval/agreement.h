#pragma once
// How two class-wise views agree (docs/protocols/metrics.md; Benz et al. §3.2): the Spearman rank correlation of two
// per-class accuracy vectors (is the most vulnerable class the same in two runs?), the cosine similarity of
// classes' mean logit (or feature) vectors, and the confusion between superclasses (CIFAR-100's coarse labels).
#include <cstdint>
#include <vector>

#include "eval/class_metrics.h"

namespace cw::fairness {

// Ranks 1..n, ties sharing the mean of the ranks they span (the "fractional" ranking Spearman's ρ needs).
std::vector<double> fractional_ranks(const std::vector<double>& v);

// Spearman's ρ: the Pearson correlation of the fractional ranks of a and b (same length, one entry per class).
// Classes where either value is NaN (a class without samples) are left out; NaN when fewer than two remain or
// either side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

// Pearson's r with the same rules: NaN pairs left out; NaN when fewer than two remain or either side is constant.
double pearson(const std::vector<double>& a, const std::vector<double>& b);

// S[k][j] = cos(v_k, v_j) for one vector per class (all of one length); NaN in a row/column whose vector is zero.
std::vector<std::vector<double>> cosine_similarity(const std::vector<std::vector<double>>& class_vectors);

// Benz et al.'s cross-class similarity (docs/protocols/metrics.md): S = cosine_similarity(mean logit vectors), and per class c
// the mean s_c = (1/(C−1)) Σ_{d≠c} S[c][d] and the max over d ≠ c. Undefined entries (a class without samples has a
// NaN mean vector, a zero vector has no direction) are left out of the mean and the max — the sum then runs over
// the defined ones — and s_c is NaN where none is defined.
struct CrossClassSimilarity {
    std::vector<std::vector<double>> matrix;
    std::vector<double> mean_other, max_other;
};
CrossClassSimilarity cross_class_similarity(const std::vector<std::vector<double>>& class_vectors);

// The coarse confusion: M'[a][b] = Σ_{k: coarse(k) = a, j: coarse(j) = b} M[k][j]; coarse_of[k] < num_coarse.
Confusion superclass_confusion(const Confusion& fine, const std::vector<int32_t>& coarse_of, int64_t num_coarse);

}  // namespace cw::fairness
