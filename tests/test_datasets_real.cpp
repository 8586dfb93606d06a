// Checks on the real datasets, where present: $CLASSWISE_DATA or ./data (fill it with `make data DATASET=...`), and
// Fashion-MNIST from the dataset-fashion-mnist package. Absent data skips, saying how to get it.
#include <catch2/catch.hpp>

#include <optional>

#include "datasets/error.h"
#include "datasets/loaders.h"
#include "datasets/paths.h"
#include "datasets/splits.h"
#include "tests/skip.h"

using namespace cw::data;

namespace {

// Runs the loader; an error that says the dataset's first file is missing means "not installed" (nullopt).
// Any other error — a partial or corrupt dataset — propagates and fails the test.
template <class Fn>
std::optional<Dataset> load_if_present(Fn load, const std::string& missing_prefix) {
    try {
        return load();
    } catch (const DataError& e) {
        if (std::string(e.what()).rfind(missing_prefix, 0) == 0) return std::nullopt;
        throw;
    }
}

std::string data_dir() { return resolve_data_dir(""); }

double plane_mean(const Dataset& d, int channel) {
    const int64_t plane = int64_t(d.height) * d.width;
    double sum = 0;
    for (int64_t i = 0; i < d.size(); ++i) {
        const uint8_t* p = d.image(i) + channel * plane;
        int64_t s = 0;
        for (int64_t k = 0; k < plane; ++k) s += p[k];
        sum += double(s);
    }
    return sum / (double(d.size()) * plane * 255.0);
}

// The skip message: what is missing and what the user can do about it.
std::string missing(const std::string& name, const std::string& dataset, const std::string& dir) {
    return name + " not found under " + dir + ". " + cw::data::how_to_get(dataset) +
           "; or point CLASSWISE_DATA at the folder that holds it";
}

}  // namespace

TEST_CASE("real data: MNIST counts per class", "[datasets][real-data]") {
    const std::string dir = data_dir();
    auto train = load_if_present([&] { return load_mnist(dir, "train"); }, "mnist: train-images-idx3-ubyte[.gz] not found");
    if (!train) CW_SKIP(missing("MNIST", "mnist", dir));
    CHECK(train->size() == 60000);
    CHECK(train->class_counts() ==
          std::vector<int64_t>{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949});
    const Dataset test = load_mnist(dir, "test");
    CHECK(test.size() == 10000);
    CHECK(test.class_counts() == std::vector<int64_t>{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009});
}

TEST_CASE("real data: Fashion-MNIST (Debian package), 6000 per class", "[datasets][real-data]") {
    const std::string dir = data_dir();
    auto train = load_if_present([&] { return load_fashion_mnist(dir, "train"); },
                                 "fashion-mnist: train-images-idx3-ubyte[.gz] not found");
    if (!train) CW_SKIP("Fashion-MNIST not found (apt-get install dataset-fashion-mnist)");
    CHECK(train->size() == 60000);
    CHECK(train->class_counts() == std::vector<int64_t>(10, 6000));
    const Dataset test = load_fashion_mnist(dir, "test");
    CHECK(test.class_counts() == std::vector<int64_t>(10, 1000));
}

TEST_CASE("real data: CIFAR-10 counts, batch order and channel means", "[datasets][real-data]") {
    const std::string dir = data_dir();
    auto train = load_if_present([&] { return load_cifar10(dir, "train"); }, "cifar10: data_batch_1.bin not found");
    if (!train) CW_SKIP(missing("CIFAR-10", "cifar10", dir));
    CHECK(train->size() == 50000);
    CHECK(train->class_counts() == std::vector<int64_t>(10, 5000));
    // data_batch_1 comes first: its official per-class counts.
    std::vector<int64_t> first(10, 0);
    for (int i = 0; i < 10000; ++i) ++first[train->labels[i]];
    CHECK(first == std::vector<int64_t>{1005, 974, 1032, 1016, 999, 937, 1030, 1001, 1025, 981});
    // R, G, B planes in that order: the published training-set means.
    CHECK(plane_mean(*train, 0) == Approx(0.49139968).margin(1e-6));
    CHECK(plane_mean(*train, 1) == Approx(0.48215841).margin(1e-6));
    CHECK(plane_mean(*train, 2) == Approx(0.44653091).margin(1e-6));
    const Split cfa = split_first_k_per_class(train->labels, 10, 100);
    CHECK(cfa.train.size() == 49000);
    CHECK(cfa.val.size() == 1000);
    const Dataset test = load_cifar10(dir, "test");
    CHECK(test.size() == 10000);
    CHECK(test.class_counts() == std::vector<int64_t>(10, 1000));
}

TEST_CASE("real data: GTSRB-32 counts and colour order", "[datasets][real-data]") {
    const std::string dir = data_dir();
    auto train = load_if_present([&] { return load_gtsrb32(dir, "train_half"); }, "gtsrb32: train_half.bin not found");
    if (!train) CW_SKIP(missing("gtsrb32", "gtsrb32", dir));
    CHECK(train->size() == 19605);
    CHECK(train->class_counts() ==
          std::vector<int64_t>{105, 1110, 1125, 705, 990, 930, 210, 720, 705, 735, 1005, 660, 1050, 1080, 390,
                               315, 210,  555,  600,  105, 180, 165, 195, 255, 135, 750, 300, 120, 270, 135,
                               225, 390,  120,  345,  210, 600, 195, 105, 1035, 150, 180, 120, 120});
    // Stop signs (14) are red, keep-right signs (38) blue: the planes are R, G, B.
    const Dataset stop = select_classes(*train, {14}), keep_right = select_classes(*train, {38});
    CHECK(plane_mean(stop, 0) > plane_mean(stop, 1));
    CHECK(plane_mean(stop, 0) > plane_mean(stop, 2));
    CHECK(plane_mean(keep_right, 2) > plane_mean(keep_right, 0));
    const Dataset test = load_gtsrb32(dir, "test");
    CHECK(test.size() == 12630);
    CHECK(test.num_classes() == 43);
    for (int64_t n : test.class_counts()) CHECK(n > 0);
}
