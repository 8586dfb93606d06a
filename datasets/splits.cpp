#include "datasets/splits.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "datasets/error.h"

namespace cw::data {

std::vector<std::vector<int64_t>> indices_by_class(const Labels& labels, int num_classes) {
    std::vector<std::vector<int64_t>> by_class(num_classes);
    for (size_t i = 0; i < labels.size(); ++i) {
        const int y = labels[i];
        if (y < 0 || y >= num_classes)
            throw DataError("label " + std::to_string(y) + " of image " + std::to_string(i) + " out of range [0, " +
                            std::to_string(num_classes) + ")");
        by_class[y].push_back(static_cast<int64_t>(i));
    }
    return by_class;
}

namespace {

// Validation takes k_c images of class c from its start or end; the rest is training. Both lists sorted.
Split split_per_class(const Labels& labels, int num_classes, const std::vector<int64_t>& k, bool from_start) {
    const auto by_class = indices_by_class(labels, num_classes);
    Split s;
    for (int c = 0; c < num_classes; ++c) {
        const auto& idx = by_class[c];
        const int64_t n = static_cast<int64_t>(idx.size());
        if (k[c] < 0 || k[c] > n)
            throw DataError("validation split: class " + std::to_string(c) + " has " + std::to_string(n) +
                            " images, cannot hold out " + std::to_string(k[c]));
        const int64_t cut = from_start ? k[c] : n - k[c];
        auto& first = from_start ? s.val : s.train;
        auto& second = from_start ? s.train : s.val;
        first.insert(first.end(), idx.begin(), idx.begin() + cut);
        second.insert(second.end(), idx.begin() + cut, idx.end());
    }
    std::sort(s.train.begin(), s.train.end());
    std::sort(s.val.begin(), s.val.end());
    return s;
}

}  // namespace

Split split_first_k_per_class(const Labels& labels, int num_classes, int64_t k) {
    return split_per_class(labels, num_classes, std::vector<int64_t>(num_classes, k), true);
}

Split split_last_k_per_class(const Labels& labels, int num_classes, int64_t k) {
    return split_per_class(labels, num_classes, std::vector<int64_t>(num_classes, k), false);
}

Split split_fraction_per_class(const Labels& labels, int num_classes, double fraction, bool from_start) {
    if (!(fraction >= 0.0 && fraction <= 1.0))
        throw DataError("validation fraction " + std::to_string(fraction) + " is not in [0, 1]");
    const auto by_class = indices_by_class(labels, num_classes);
    std::vector<int64_t> k(num_classes);
    // The epsilon keeps 0.02 * 5000 at 100 despite 0.02 not being exact in binary.
    for (int c = 0; c < num_classes; ++c)
        k[c] = static_cast<int64_t>(std::floor(fraction * double(by_class[c].size()) + 1e-9));
    return split_per_class(labels, num_classes, k, from_start);
}

std::vector<int64_t> class_subset(const Labels& labels, const std::vector<int>& classes) {
    std::vector<int64_t> all(labels.size());
    std::iota(all.begin(), all.end(), 0);
    return filter_by_class(all, labels, classes);
}

std::vector<int64_t> filter_by_class(const std::vector<int64_t>& indices, const Labels& labels,
                                     const std::vector<int>& classes) {
    std::vector<int64_t> out;
    for (int64_t i : indices) {
        if (i < 0 || i >= static_cast<int64_t>(labels.size()))
            throw DataError("index " + std::to_string(i) + " out of range [0, " + std::to_string(labels.size()) + ")");
        if (std::find(classes.begin(), classes.end(), labels[i]) != classes.end()) out.push_back(i);
    }
    return out;
}

std::vector<int> most_frequent_classes(const Labels& labels, int num_classes, int k) {
    if (k < 0 || k > num_classes)
        throw DataError("most_frequent_classes: k = " + std::to_string(k) + " not in [0, " +
                        std::to_string(num_classes) + "]");
    const auto by_class = indices_by_class(labels, num_classes);
    std::vector<int> order(num_classes);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return by_class[a].size() > by_class[b].size(); });
    order.resize(k);
    return order;
}

std::vector<int64_t> exponential_profile(int num_classes, int64_t n_max, double rho) {
    if (num_classes < 1 || n_max < 0 || !(rho >= 1.0))
        throw DataError("exponential_profile: need classes >= 1, n_max >= 0 and rho >= 1 (got " +
                        std::to_string(num_classes) + ", " + std::to_string(n_max) + ", " + std::to_string(rho) + ")");
    std::vector<int64_t> n(num_classes);
    for (int c = 0; c < num_classes; ++c) {
        const double e = num_classes == 1 ? 0.0 : double(c) / (num_classes - 1);
        n[c] = static_cast<int64_t>(std::floor(double(n_max) * std::pow(rho, -e) + 1e-9));
    }
    return n;
}

std::vector<int64_t> imbalanced_subset(const Labels& labels, int num_classes, const std::vector<int64_t>& counts,
                                       cw::Rng* rng) {
    if (static_cast<int>(counts.size()) != num_classes)
        throw DataError("imbalanced_subset: " + std::to_string(counts.size()) + " counts for " +
                        std::to_string(num_classes) + " classes");
    auto by_class = indices_by_class(labels, num_classes);
    std::vector<int64_t> out;
    for (int c = 0; c < num_classes; ++c) {
        auto& idx = by_class[c];
        if (counts[c] < 0 || counts[c] > static_cast<int64_t>(idx.size()))
            throw DataError("imbalanced_subset: class " + std::to_string(c) + " has " + std::to_string(idx.size()) +
                            " images, " + std::to_string(counts[c]) + " requested");
        if (rng) rng->shuffle(idx);
        out.insert(out.end(), idx.begin(), idx.begin() + counts[c]);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<int64_t> count_per_class(const std::vector<int64_t>& indices, const Labels& labels, int num_classes) {
    std::vector<int64_t> n(num_classes, 0);
    for (int64_t i : indices) {
        if (i < 0 || i >= static_cast<int64_t>(labels.size()) || labels[i] < 0 || labels[i] >= num_classes)
            throw DataError("count_per_class: index " + std::to_string(i) + " or its label is out of range");
        ++n[labels[i]];
    }
    return n;
}

}  // namespace cw::data
