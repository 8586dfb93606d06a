#pragma once
// Index-level subsets of a dataset: stratified train/validation splits, per-class subsets and class-imbalanced
// (long-tail) subsets. Everything here returns dataset indices in ascending (dataset) order, so a subset keeps
// the original index of every image for per-sample records, and no image data is copied.
#include <cstdint>
#include <vector>

#include "engine/rng.h"

namespace cw::data {

using Labels = std::vector<int32_t>;

// For each class, its indices in dataset order.
std::vector<std::vector<int64_t>> indices_by_class(const Labels& labels, int num_classes);

struct Split {
    std::vector<int64_t> train;
    std::vector<int64_t> val;
};

// CFA / FAIR-TAT: the first k images (in dataset order) of every class go to validation, the rest to training.
Split split_first_k_per_class(const Labels& labels, int num_classes, int64_t k);
// FRL / WAT: the last k images of every class go to validation (CIFAR-10, k = 300: indices [0,4700) of each
// class train, [4700,5000) validate).
Split split_last_k_per_class(const Labels& labels, int num_classes, int64_t k);
// floor(fraction * n_c) images per class to validation, taken from the start (CFA/FAIR-TAT, 0.02 on CIFAR-10 =
// 100 per class) or from the end of each class.
Split split_fraction_per_class(const Labels& labels, int num_classes, double fraction, bool from_start = true);

// Indices of the images whose label is in `classes`.
std::vector<int64_t> class_subset(const Labels& labels, const std::vector<int>& classes);
// Restricts an index list to the given classes (keeps its order).
std::vector<int64_t> filter_by_class(const std::vector<int64_t>& indices, const Labels& labels,
                                     const std::vector<int>& classes);

// The k classes with the most images (ties: lower class id first), in descending count order; e.g. FRL's
// 17 most frequent GTSRB classes.
std::vector<int> most_frequent_classes(const Labels& labels, int num_classes, int k);

// Long-tail class sizes n_c = floor(n_max * rho^(-c / (C - 1))), c = 0..C-1 (class 0 largest, class C-1 has
// n_max / rho). rho >= 1 is the imbalance ratio.
std::vector<int64_t> exponential_profile(int num_classes, int64_t n_max, double rho);
// n_c images of each class c: the first n_c in dataset order, or (rng given) a uniformly random n_c of them.
// Throws if a class has fewer than n_c images.
std::vector<int64_t> imbalanced_subset(const Labels& labels, int num_classes, const std::vector<int64_t>& counts,
                                       cw::Rng* rng = nullptr);

// Images per class among `indices`.
std::vector<int64_t> count_per_class(const std::vector<int64_t>& indices, const Labels& labels, int num_classes);

}  // namespace cw::data
