// Stratified validation splits, class subsets and long-tail subsets: counts per class and dataset order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "datasets/error.h"
#include "datasets/splits.h"
#include "engine/rng.h"

using namespace cw::data;

namespace {
// A CIFAR-like label list: `per_class` images of each of `classes` classes, interleaved pseudo-randomly.
Labels shuffled_labels(int classes, int per_class, uint64_t seed) {
    Labels l;
    for (int c = 0; c < classes; ++c) l.insert(l.end(), per_class, c);
    cw::Rng rng(seed);
    rng.shuffle(l);
    return l;
}
bool sorted_unique(const std::vector<int64_t>& v) {
    return std::is_sorted(v.begin(), v.end()) && std::adjacent_find(v.begin(), v.end()) == v.end();
}
}  // namespace

TEST_CASE("splits: FRL last-300-per-class on a CIFAR-10-sized label list", "[datasets]") {
    const Labels labels = shuffled_labels(10, 5000, 1);
    const Split s = split_last_k_per_class(labels, 10, 300);
    CHECK(s.train.size() == 47000);
    CHECK(s.val.size() == 3000);
    CHECK(count_per_class(s.train, labels, 10) == std::vector<int64_t>(10, 4700));
    CHECK(count_per_class(s.val, labels, 10) == std::vector<int64_t>(10, 300));
    CHECK(sorted_unique(s.train));
    CHECK(sorted_unique(s.val));
    // [0, 4700) of each class trains: every validation image comes after every training image of its class.
    const auto by_class = indices_by_class(labels, 10);
    for (int c = 0; c < 10; ++c) {
        const std::set<int64_t> val(s.val.begin(), s.val.end());
        for (int k = 0; k < 5000; ++k) CHECK((val.count(by_class[c][k]) == 1) == (k >= 4700));
    }
}

TEST_CASE("splits: CFA / FAIR-TAT first 100 per class, or 2% per class", "[datasets]") {
    const Labels labels = shuffled_labels(10, 5000, 2);
    const Split s = split_first_k_per_class(labels, 10, 100);
    CHECK(count_per_class(s.val, labels, 10) == std::vector<int64_t>(10, 100));
    CHECK(count_per_class(s.train, labels, 10) == std::vector<int64_t>(10, 4900));
    const auto by_class = indices_by_class(labels, 10);
    for (int c = 0; c < 10; ++c)
        for (int k = 0; k < 100; ++k) CHECK(std::binary_search(s.val.begin(), s.val.end(), by_class[c][k]));
    const Split f = split_fraction_per_class(labels, 10, 0.02);
    CHECK(f.val == s.val);
    CHECK(f.train == s.train);
    // CIFAR-100: FAIR-TAT's 2% = 10 per class, CFA's 5% = 25 per class.
    const Labels c100 = shuffled_labels(100, 500, 3);
    CHECK(count_per_class(split_fraction_per_class(c100, 100, 0.02).val, c100, 100) == std::vector<int64_t>(100, 10));
    CHECK(count_per_class(split_fraction_per_class(c100, 100, 0.05).val, c100, 100) == std::vector<int64_t>(100, 25));
    const Split tail = split_fraction_per_class(labels, 10, 0.06, false);
    CHECK(tail.val == split_last_k_per_class(labels, 10, 300).val);
    CHECK_THROWS_AS(split_first_k_per_class(labels, 10, 5001), DataError);
    CHECK_THROWS_AS(split_fraction_per_class(labels, 10, 1.5), DataError);
    CHECK_THROWS_AS(indices_by_class(Labels{0, 10}, 10), DataError);
}

TEST_CASE("splits: class subsets and the most frequent classes", "[datasets]") {
    const Labels labels{3, 1, 3, 0, 2, 3, 1};
    CHECK(class_subset(labels, {3, 0}) == std::vector<int64_t>{0, 2, 3, 5});
    CHECK(filter_by_class({6, 5, 4, 1}, labels, {1}) == std::vector<int64_t>{6, 1});
    CHECK(most_frequent_classes(labels, 4, 2) == std::vector<int>{3, 1});
    CHECK(most_frequent_classes(labels, 4, 4) == std::vector<int>{3, 1, 0, 2});
}

TEST_CASE("splits: exponential long-tail profile and imbalanced subsets", "[datasets]") {
    const auto n = exponential_profile(10, 5000, 100.0);
    REQUIRE(n.size() == 10);
    CHECK(n.front() == 5000);
    CHECK(n.back() == 50);
    CHECK(n[1] == 2997);  // 5000 * 100^(-1/9)
    CHECK(std::is_sorted(n.rbegin(), n.rend()));
    CHECK(exponential_profile(10, 500, 1.0) == std::vector<int64_t>(10, 500));
    CHECK_THROWS_AS(exponential_profile(10, 500, 0.5), DataError);

    const Labels labels = shuffled_labels(10, 5000, 4);
    const auto first = imbalanced_subset(labels, 10, n);
    CHECK(count_per_class(first, labels, 10) == n);
    CHECK(sorted_unique(first));
    const auto by_class = indices_by_class(labels, 10);
    CHECK(std::binary_search(first.begin(), first.end(), by_class[9][49]));
    CHECK_FALSE(std::binary_search(first.begin(), first.end(), by_class[9][50]));
    cw::Rng r1(5), r2(5);
    const auto random1 = imbalanced_subset(labels, 10, n, &r1);
    const auto random2 = imbalanced_subset(labels, 10, n, &r2);
    CHECK(random1 == random2);
    CHECK(random1 != first);
    CHECK(count_per_class(random1, labels, 10) == n);
    CHECK_THROWS_AS(imbalanced_subset(labels, 10, std::vector<int64_t>(10, 5001)), DataError);
}
