// Augmentation properties: a crop shifts content, padding is reflect or zeros, a flip mirrors, defaults per
// dataset, and the draws are reproducible from the seed.
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "datasets/augment.h"
#include "datasets/error.h"
#include "engine/rng.h"

using namespace cw::data;

namespace {
constexpr int C = 2, H = 6, W = 5;
std::vector<uint8_t> ramp_image() {
    std::vector<uint8_t> img(C * H * W);
    for (int c = 0; c < C; ++c)
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) img[(c * H + y) * W + x] = static_cast<uint8_t>(100 * c + 10 * y + x + 1);
    return img;
}
uint8_t at(const std::vector<uint8_t>& img, int c, int y, int x) { return img[(c * H + y) * W + x]; }
}  // namespace

TEST_CASE("augment: a crop at offset (p, p) is the identity, other offsets shift the content", "[datasets]") {
    const auto src = ramp_image();
    std::vector<uint8_t> dst(src.size());
    const int p = 2;
    for (PadMode mode : {PadMode::Zeros, PadMode::Reflect}) {
        crop_padded(src.data(), dst.data(), C, H, W, p, mode, p, p);
        CHECK(dst == src);
        for (int oy = 0; oy <= 2 * p; ++oy)
            for (int ox = 0; ox <= 2 * p; ++ox) {
                crop_padded(src.data(), dst.data(), C, H, W, p, mode, oy, ox);
                const int dy = oy - p, dx = ox - p;
                for (int c = 0; c < C; ++c)
                    for (int y = 0; y < H; ++y)
                        for (int x = 0; x < W; ++x) {
                            const int sy = y + dy, sx = x + dx;
                            if (sy >= 0 && sy < H && sx >= 0 && sx < W) CHECK(at(dst, c, y, x) == at(src, c, sy, sx));
                        }
            }
    }
}

TEST_CASE("augment: zero padding is black, reflect padding mirrors without repeating the edge", "[datasets]") {
    const auto src = ramp_image();
    std::vector<uint8_t> dst(src.size());
    // Shift right by 2 (offset x = 0 with padding 2): columns 0 and 1 come from the padding.
    crop_padded(src.data(), dst.data(), C, H, W, 2, PadMode::Zeros, 2, 0);
    CHECK(at(dst, 1, 3, 0) == 0);
    CHECK(at(dst, 1, 3, 1) == 0);
    CHECK(at(dst, 1, 3, 2) == at(src, 1, 3, 0));
    crop_padded(src.data(), dst.data(), C, H, W, 2, PadMode::Reflect, 2, 0);
    CHECK(at(dst, 1, 3, 0) == at(src, 1, 3, 2));  // padded column -2 mirrors column 2
    CHECK(at(dst, 1, 3, 1) == at(src, 1, 3, 1));  // padded column -1 mirrors column 1
    // Shift up: the bottom rows come from below the image.
    crop_padded(src.data(), dst.data(), C, H, W, 2, PadMode::Reflect, 4, 2);
    CHECK(at(dst, 0, H - 1, 3) == at(src, 0, H - 3, 3));  // padded row H+1 mirrors row H-3
    CHECK(at(dst, 0, H - 2, 3) == at(src, 0, H - 2, 3));  // padded row H mirrors row H-2
    CHECK_THROWS_AS(crop_padded(src.data(), dst.data(), C, H, W, 5, PadMode::Reflect, 0, 0), DataError);
    CHECK_THROWS_AS(crop_padded(src.data(), dst.data(), C, H, W, 2, PadMode::Zeros, 5, 0), DataError);
    Augmentation too_wide;
    too_wide.random_crop = true;
    too_wide.padding = W;
    cw::Rng rng(1);
    CHECK_THROWS_AS(augment_image(src.data(), dst.data(), C, H, W, too_wide, rng), DataError);
    too_wide.pad_mode = PadMode::Zeros;  // zero padding has no such limit
    augment_image(src.data(), dst.data(), C, H, W, too_wide, rng);
}

TEST_CASE("augment: a flip is a mirror and flipping twice restores the image", "[datasets]") {
    const auto src = ramp_image();
    std::vector<uint8_t> once(src.size()), twice(src.size());
    flip_horizontal(src.data(), once.data(), C, H, W);
    for (int c = 0; c < C; ++c)
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) CHECK(at(once, c, y, x) == at(src, c, y, W - 1 - x));
    flip_horizontal(once.data(), twice.data(), C, H, W);
    CHECK(twice == src);
}

TEST_CASE("augment: per-dataset defaults — no flips for digits and signs, none for MNIST/GTSRB", "[datasets]") {
    const Augmentation cifar = default_augmentation("cifar10");
    CHECK(cifar.random_crop);
    CHECK(cifar.horizontal_flip);
    CHECK(cifar.padding == 4);
    CHECK(cifar.pad_mode == PadMode::Reflect);
    CHECK(cifar.flip_probability == 0.5f);
    CHECK(default_augmentation("cifar100").horizontal_flip);
    CHECK(default_augmentation("tinyimagenet").horizontal_flip);
    const Augmentation svhn = default_augmentation("svhn");
    CHECK(svhn.random_crop);
    CHECK_FALSE(svhn.horizontal_flip);
    for (const char* name : {"mnist", "fashion-mnist", "gtsrb", "gtsrb32", "cifar10c"})
        CHECK_FALSE(default_augmentation(name).enabled());
    CHECK(cifar.describe() == "crop(pad 4, reflect)+flip(0.5)");
    CHECK(Augmentation{}.describe() == "none");

    const Augmentation zeros = parse_augmentation("default", "zeros", "cifar10");
    CHECK(zeros.pad_mode == PadMode::Zeros);
    CHECK(zeros.horizontal_flip);
    CHECK_FALSE(parse_augmentation("none", "", "cifar10").enabled());
    CHECK(parse_augmentation("flip", "", "mnist").horizontal_flip);
    CHECK_THROWS_AS(parse_augmentation("rotate", "", "cifar10"), DataError);
    CHECK_THROWS_AS(parse_pad_mode("edge"), DataError);
}

TEST_CASE("augment: digits are never flipped; draws are reproducible from the seed", "[datasets]") {
    const auto src = ramp_image();
    std::vector<uint8_t> out(src.size()), flipped(src.size());
    flip_horizontal(src.data(), flipped.data(), C, H, W);

    Augmentation flip_only;
    flip_only.horizontal_flip = true;
    cw::Rng rng(7);
    int n_flipped = 0;
    for (int i = 0; i < 400; ++i) {
        augment_image(src.data(), out.data(), C, H, W, flip_only, rng);
        if (out == flipped) ++n_flipped;
        else REQUIRE(out == src);
    }
    CHECK(n_flipped > 150);
    CHECK(n_flipped < 250);

    Augmentation digits = default_augmentation("svhn");
    digits.padding = 2;
    cw::Rng rng2(7);
    std::set<std::vector<uint8_t>> views;
    for (int i = 0; i < 200; ++i) {
        augment_image(src.data(), out.data(), C, H, W, digits, rng2);
        CHECK(out != flipped);
        views.insert(out);
    }
    CHECK(views.size() == 25);  // all (2p+1)^2 crop offsets occur, and nothing else

    Augmentation both = default_augmentation("cifar10");
    both.padding = 2;
    cw::Rng a(123), b(123), c(124);
    std::vector<uint8_t> va(src.size()), vb(src.size()), vc(src.size());
    bool any_difference = false;
    for (int i = 0; i < 50; ++i) {
        augment_image(src.data(), va.data(), C, H, W, both, a);
        augment_image(src.data(), vb.data(), C, H, W, both, b);
        augment_image(src.data(), vc.data(), C, H, W, both, c);
        REQUIRE(va == vb);
        any_difference |= va != vc;
    }
    CHECK(any_difference);
}
