// The generated `synthetic` set (datasets/synthetic.h): shapes, sizes, balanced labels, the same bytes on every
// call, distinct splits, one-line errors — and classes of unequal difficulty, which the experiment tests rely on.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "datasets/error.h"
#include "datasets/registry.h"
#include "datasets/synthetic.h"

using namespace cw::data;

namespace {
// Per-class accuracy of the nearest class mean of a hand-made feature — the mean colour of the 150 pixels
// farthest from the image's mean colour (about the object) — trained on train, measured on test. Enough to tell
// the easy classes (distinct colours) from the ones made hard on purpose.
std::vector<double> nearest_mean_accuracy(const Dataset& train, const Dataset& test) {
    auto features = [](const Dataset& d, int64_t i) {
        const uint8_t* im = d.image(i);
        const int64_t hw = int64_t(d.height) * d.width;
        double mean[3] = {0, 0, 0};
        for (int c = 0; c < 3; ++c)
            for (int64_t p = 0; p < hw; ++p) mean[c] += im[c * hw + p] / 255.0 / hw;
        std::vector<std::pair<double, int64_t>> far;
        for (int64_t p = 0; p < hw; ++p) {
            double dist = 0;
            for (int c = 0; c < 3; ++c) dist += std::pow(im[c * hw + p] / 255.0 - mean[c], 2);
            far.push_back({-dist, p});
        }
        std::partial_sort(far.begin(), far.begin() + 150, far.end());
        std::vector<double> f(3, 0.0);
        for (int j = 0; j < 150; ++j)
            for (int c = 0; c < 3; ++c) f[c] += im[c * hw + far[j].second] / 255.0 / 150;
        return f;
    };
    const int C = train.num_classes();
    std::vector<std::vector<double>> centre(C, std::vector<double>(3, 0.0));
    const auto counts = train.class_counts();
    for (int64_t i = 0; i < train.size(); ++i) {
        const auto f = features(train, i);
        for (size_t j = 0; j < f.size(); ++j) centre[train.labels[i]][j] += f[j] / counts[train.labels[i]];
    }
    std::vector<double> correct(C, 0), seen(C, 0);
    for (int64_t i = 0; i < test.size(); ++i) {
        const auto f = features(test, i);
        int best = 0;
        double best_d = 1e300;
        for (int k = 0; k < C; ++k) {
            double d = 0;
            for (size_t j = 0; j < f.size(); ++j) d += (f[j] - centre[k][j]) * (f[j] - centre[k][j]);
            if (d < best_d) best_d = d, best = k;
        }
        seen[test.labels[i]] += 1;
        correct[test.labels[i]] += best == test.labels[i];
    }
    for (int k = 0; k < C; ++k) correct[k] /= seen[k];
    return correct;
}
}  // namespace

TEST_CASE("synthetic: shapes, balanced labels, registry entry", "[datasets][synthetic]") {
    const Dataset train = load_dataset("synthetic", "train", "/no/such/folder");   // needs no files
    const Dataset test = load_dataset("synthetic", "test");
    CHECK(train.size() == kSyntheticTrainSize);
    CHECK(test.size() == kSyntheticTestSize);
    for (const Dataset* d : {&train, &test}) {
        CHECK(d->channels == 3);
        CHECK(d->height == 32);
        CHECK(d->width == 32);
        CHECK(d->num_classes() == 10);
        CHECK(d->pixels.size() == size_t(d->size()) * 3 * 32 * 32);
        for (int64_t n : d->class_counts()) CHECK(n == d->size() / 10);
        // Every prefix of ten is one image per class: --train-n / --eval-n prefixes stay balanced.
        for (int64_t i = 0; i < 20; ++i) CHECK(d->labels[i] == i % 10);
    }
    CHECK(dataset_info("synthetic").num_classes == 10);
    CHECK(dataset_class_names("synthetic") == train.class_names);
    CHECK(train.class_names[3] == "brown square");
    CHECK_THROWS_WITH(load_dataset("synthetic", "val"), "synthetic: no split 'val' (expected train or test)");
}

TEST_CASE("synthetic: deterministic, splits differ, pixels spread", "[datasets][synthetic]") {
    const Dataset a = load_synthetic("train"), b = load_synthetic("train");
    CHECK(a.pixels == b.pixels);
    CHECK(a.labels == b.labels);
    const Dataset t = load_synthetic("test");
    CHECK(!std::equal(t.pixels.begin(), t.pixels.end(), a.pixels.begin()));   // new draws, not the first training images
    int lo = 255, hi = 0;
    for (uint8_t p : a.pixels) lo = std::min<int>(lo, p), hi = std::max<int>(hi, p);
    CHECK(lo == 0);     // noise reaches both ends of the range
    CHECK(hi == 255);
    // Two images of one class are different draws.
    CHECK(!std::equal(a.image(0), a.image(0) + a.image_bytes(), a.image(10)));
}

TEST_CASE("synthetic: some classes are harder than others", "[datasets][synthetic]") {
    const auto acc = nearest_mean_accuracy(load_synthetic("train"), load_synthetic("test"));
    double easy = 0;
    for (int k : {0, 1, 6, 8, 9}) easy += acc[k] / 5;
    const double overlapping = (acc[3] + acc[5]) / 2;   // brown square / brown disc
    for (double a : acc) UNSCOPED_INFO(a);
    INFO("easy " << easy << ", overlapping " << overlapping << ", triangle " << acc[2]);
    CHECK(easy > 0.9);
    CHECK(overlapping < easy - 0.3);
    CHECK(acc[2] < easy);
}
