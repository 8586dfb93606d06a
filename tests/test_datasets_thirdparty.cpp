// Dataset files written by the formats' reference tools (scipy.io.savemat, numpy.save, numpy's byte layout of
// CIFAR-100 records) and stb_image_resize against a numpy implementation of its documented filters: all made by
// tools/make_thirdparty_fixtures.py into tests/fixtures/thirdparty/ (its docstring documents the formulas the
// expectations below recompute). The hand-written writers of tests/test_datasets_fixtures.h encode our reading
// of each format; these files encode the reference tools' writing of it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "datasets/file_io.h"
#include "datasets/image.h"
#include "datasets/loaders.h"
#include "datasets/npy.h"
#include "tests/test_nn_util.h"

using namespace cw::data;

namespace {

std::string thirdparty_dir() {
    const std::string dir = cw_nn_test::fixture_path("thirdparty");
    if (dir.empty()) FAIL("tests/fixtures/thirdparty missing (tools/make_thirdparty_fixtures.py)");
    return dir;
}

// The script's pixel(i, y, x, c).
uint8_t pixel(int64_t i, int y, int x, int c) {
    return static_cast<uint8_t>((97 * i + 59 * c + 13 * y + 7 * x + (x * y) % 11) % 256);
}

// Every CHW pixel of every image of `d` against the formula; image k of `d` is formula image first + k.
void require_formula_pixels(const Dataset& d, int64_t first = 0) {
    REQUIRE(d.channels == 3);
    REQUIRE(d.height == 32);
    REQUIRE(d.width == 32);
    int64_t wrong = 0;
    std::string first_wrong;
    for (int64_t k = 0; k < d.size(); ++k)
        for (int c = 0; c < 3; ++c)
            for (int y = 0; y < 32; ++y)
                for (int x = 0; x < 32; ++x) {
                    const uint8_t got = d.pixels[size_t(k * 3072 + c * 1024 + y * 32 + x)];
                    const uint8_t want = pixel(first + k, y, x, c);
                    if (got != want && wrong++ == 0)
                        first_wrong = "image " + std::to_string(k) + " c " + std::to_string(c) + " y " +
                                      std::to_string(y) + " x " + std::to_string(x) + ": " + std::to_string(got) +
                                      ", expected " + std::to_string(want);
                }
    INFO(d.name << ": " << wrong << " wrong pixels; first: " << first_wrong);
    REQUIRE(wrong == 0);
}

NpyArray read_npy(const std::string& path) {
    const std::vector<uint8_t> bytes = read_file(path);
    return parse_npy(bytes.data(), bytes.size(), path);
}

}  // namespace

TEST_CASE("third-party files: SVHN .mat written by scipy.io.savemat, uncompressed and compressed", "[datasets]") {
    // train_32x32.mat: do_compression=False, 5 images, digits (3i+1) mod 10; test: compressed, 4, (3i+2) mod 10.
    const Dataset train = load_svhn(thirdparty_dir(), "train");
    CHECK(train.labels == std::vector<int32_t>{1, 4, 7, 0, 3});  // 0 is stored as 10
    require_formula_pixels(train);
    const Dataset test = load_svhn(thirdparty_dir(), "test");
    CHECK(test.labels == std::vector<int32_t>{2, 5, 8, 1});
    require_formula_pixels(test);
}

TEST_CASE("third-party files: CIFAR-10-C .npy written by numpy.save, every severity", "[datasets]") {
    // fog.npy holds 10 images (2 per severity), labels.npy int64 (7i+3) mod 10.
    for (int severity = 1; severity <= 5; ++severity) {
        INFO("severity " << severity);
        const Dataset d = load_cifar10c(thirdparty_dir(), "fog", severity);
        REQUIRE(d.size() == 2);
        const int64_t first = 2 * (severity - 1);
        CHECK(d.labels == std::vector<int32_t>{int32_t((7 * first + 3) % 10), int32_t((7 * (first + 1) + 3) % 10)});
        require_formula_pixels(d, first);
    }
}

TEST_CASE("third-party files: CIFAR-100 binary records laid out by numpy, fine and coarse labels", "[datasets]") {
    // fine label of image i = (37i + 5 + shift) mod 100, shift 0 (train, 4 images) or 50 (test, 3); coarse = fine mod 20.
    for (const auto& [split, n, shift] : {std::tuple<std::string, int, int>{"train", 4, 0}, {"test", 3, 50}}) {
        INFO(split);
        const Dataset d = load_cifar100(thirdparty_dir(), split);
        REQUIRE(d.size() == n);
        std::vector<int32_t> fine, coarse;
        for (int i = 0; i < n; ++i) {
            fine.push_back((37 * i + 5 + shift) % 100);
            coarse.push_back(fine.back() % 20);
        }
        CHECK(d.labels == fine);
        CHECK(d.coarse_labels == coarse);
        require_formula_pixels(d);
    }
}

// stb keeps float32 intermediates and rounds x + 0.5 down at the end; the reference is the exact (float64) value
// before that rounding, so a correct result lies within 0.5 of it. 0.01 more covers float32 accumulation
// (~1e-5 of 255 here). A different filter moves pixels of this high-contrast image by tens of levels: Mitchell
// instead of Catmull-Rom by up to 40, a triangle filter by more.
TEST_CASE("resize: stb_image_resize's default filters match a numpy reference (up, down, mixed)", "[datasets]") {
    for (const std::string name : {"up", "down", "mixed"}) {
        INFO("case " << name);
        const NpyArray in = read_npy(thirdparty_dir() + "/resize_" + name + "_in.npy");
        const NpyArray ref = read_npy(thirdparty_dir() + "/resize_" + name + "_ref.npy");
        REQUIRE(in.header.descr == "|u1");
        REQUIRE(ref.header.descr == "<f4");
        REQUIRE(in.header.shape.size() == 3);
        REQUIRE(ref.header.shape.size() == 3);
        HwcImage img;
        img.height = int(in.header.shape[0]);
        img.width = int(in.header.shape[1]);
        img.channels = int(in.header.shape[2]);
        img.pixels = in.data;
        const int out_h = int(ref.header.shape[0]), out_w = int(ref.header.shape[1]);
        const HwcImage out = resize(img, out_w, out_h, "fixture " + name);
        REQUIRE(out.pixels.size() == size_t(ref.header.numel()));
        std::vector<float> want(out.pixels.size());
        std::memcpy(want.data(), ref.data.data(), want.size() * sizeof(float));
        double worst = 0;
        size_t at = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            const double d = std::fabs(double(out.pixels[i]) - want[i]);
            if (d > worst) worst = d, at = i;
        }
        INFO(img.width << "x" << img.height << " -> " << out_w << "x" << out_h << ": worst |stb - reference| "
                       << worst << " at element " << at << " (stb " << int(out.pixels[at]) << ", reference "
                       << want[at] << ")");
        CHECK(worst <= 0.51);
    }
}
