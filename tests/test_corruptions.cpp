// Properties of datasets/corruptions.h that hold for any image: the names, shape and [0, 1] range kept for any
// size and channel count, determinism for a seed, constant images through the blurs, the non-RGB rules, the
// Dataset-level API, and one-line errors for bad names, severities, fields and images.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include "datasets/corruptions.h"
#include "datasets/error.h"
#include "datasets/loaders.h"
#include "engine/rng.h"

using namespace cw::data;

namespace {

ChwImage random_image(int c, int h, int w, uint64_t seed) {
    cw::Rng rng(seed);
    ChwImage img(c, h, w);
    for (float& v : img.pixels) v = static_cast<float>(int(rng.below(256)) / 255.0);
    img.pixels[0] = 0.f;  // both ends of the range present
    img.pixels[1] = 1.f;
    return img;
}

ChwImage constant_image(int c, int h, int w, float v) {
    ChwImage img(c, h, w);
    for (float& p : img.pixels) p = v;
    return img;
}

bool has_random_field(const std::string& name) {
    cw::Rng rng(0);
    return !draw_corruption_field(name, 3, 3, 8, 8, rng).arrays.empty();
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const DataError& e) {
        return e.what();
    }
    return "(nothing thrown)";
}

}  // namespace

TEST_CASE("corruptions: the 19 names are CIFAR-10-C's files, in their order", "[corruptions]") {
    CHECK(corruption_names() == cifar10c_corruptions());
    CHECK(corruption_names().size() == 19);
    for (const auto& name : corruption_names()) CHECK(is_corruption(name));
    CHECK_FALSE(is_corruption("fogg"));
}

TEST_CASE("corruptions: any size and channel count keeps its shape and stays in [0, 1]", "[corruptions]") {
    const int shapes[][3] = {{3, 32, 32}, {1, 24, 20}, {3, 17, 29}, {4, 16, 16}, {2, 9, 40}, {3, 2, 3}, {1, 1, 1}, {3, 1, 5}};
    for (const auto& name : corruption_names())
        for (const auto& s : shapes)
            for (int severity = 1; severity <= 5; ++severity) {
                INFO(name << " severity " << severity << " on " << s[0] << "x" << s[1] << "x" << s[2]);
                const ChwImage x = random_image(s[0], s[1], s[2], 10 + severity);
                cw::Rng rng(severity);
                const ChwImage y = corrupt(x, name, severity, rng);
                REQUIRE(y.channels == x.channels);
                REQUIRE(y.height == x.height);
                REQUIRE(y.width == x.width);
                REQUIRE(y.pixels.size() == x.pixels.size());
                bool in_range = true;
                for (float v : y.pixels) in_range = in_range && std::isfinite(v) && v >= 0.f && v <= 1.f;
                CHECK(in_range);
            }
}

TEST_CASE("corruptions: the same seed gives the same image, another seed another one", "[corruptions]") {
    const ChwImage x = random_image(3, 32, 32, 5);
    for (const auto& name : corruption_names())
        for (int severity = 1; severity <= 5; ++severity) {
            INFO(name << " severity " << severity);
            cw::Rng a(42), b(42), c(43);
            const ChwImage ya = corrupt(x, name, severity, a), yb = corrupt(x, name, severity, b);
            const ChwImage yc = corrupt(x, name, severity, c);
            CHECK(ya.pixels == yb.pixels);
            if (has_random_field(name))
                CHECK(ya.pixels != yc.pixels);
            else
                CHECK(ya.pixels == yc.pixels);  // deterministic corruptions ignore the generator
        }
}

TEST_CASE("corruptions: a field drawn and applied equals corrupt()", "[corruptions]") {
    const ChwImage x = random_image(3, 20, 24, 8);
    for (const auto& name : corruption_names()) {
        INFO(name);
        cw::Rng a(9), b(9);
        const CorruptionField f = draw_corruption_field(name, 4, x.channels, x.height, x.width, a);
        CHECK(apply_corruption(x, name, 4, f).pixels == corrupt(x, name, 4, b).pixels);
    }
}

TEST_CASE("corruptions: blurs and geometric ones leave a constant image constant", "[corruptions]") {
    // Each of these is a weighted mean of pixels (weights summing to 1) or a resampling of them.
    const ChwImage x = constant_image(3, 32, 32, 0.4f);
    for (const char* name : {"defocus_blur", "glass_blur", "motion_blur", "zoom_blur", "gaussian_blur", "pixelate",
                             "elastic_transform"})
        for (int severity = 1; severity <= 5; ++severity) {
            INFO(name << " severity " << severity);
            cw::Rng rng(1);
            const ChwImage y = corrupt(x, name, severity, rng);
            double worst = 0;
            // glass_blur truncates to uint8 in the middle, as the script does: 0.4 * 255 = 102 exactly.
            for (float v : y.pixels) worst = std::max(worst, std::fabs(double(v) - 0.4));
            CHECK(worst < 1e-6);
        }
}

TEST_CASE("corruptions: contrast keeps each channel's mean, brightness raises V", "[corruptions]") {
    ChwImage x = random_image(3, 16, 16, 3);
    for (float& v : x.pixels) v = 0.25f + 0.5f * v;  // no clipping at any severity
    cw::Rng rng(0);
    const ChwImage y = corrupt(x, "contrast", 5, rng);
    for (int c = 0; c < 3; ++c) {
        double mx = 0, my = 0, sx = 0, sy = 0;
        for (size_t i = 0; i < x.plane_size(); ++i) {
            mx += x.pixels[c * x.plane_size() + i];
            my += y.pixels[c * x.plane_size() + i];
        }
        mx /= double(x.plane_size());
        my /= double(x.plane_size());
        CHECK(my == Approx(mx).margin(1e-6));
        for (size_t i = 0; i < x.plane_size(); ++i) {
            sx += std::fabs(x.pixels[c * x.plane_size() + i] - mx);
            sy += std::fabs(y.pixels[c * x.plane_size() + i] - my);
        }
        CHECK(sy == Approx(0.15 * sx).epsilon(1e-5));  // severity 5 scales deviations by 0.15
    }
    // A gray pixel has S = 0, so brightness adds c to it: severity 3 adds 0.15.
    const ChwImage g = constant_image(3, 4, 4, 0.5f);
    const ChwImage b = corrupt(g, "brightness", 3, rng);
    for (float v : b.pixels) CHECK(v == Approx(0.65).margin(1e-6));
}

TEST_CASE("corruptions: a 1-channel image is corrupted as the gray RGB image and its luma", "[corruptions]") {
    // The colour-space corruptions: on a gray image brightness is V + c, the same as on (v, v, v).
    const ChwImage gray = random_image(1, 12, 10, 4);
    ChwImage rgb(3, 12, 10);
    for (int c = 0; c < 3; ++c)
        for (size_t i = 0; i < gray.plane_size(); ++i) rgb.pixels[c * gray.plane_size() + i] = gray.pixels[i];
    for (const char* name : {"brightness", "saturate"})
        for (int severity = 1; severity <= 5; ++severity) {
            INFO(name << " severity " << severity);
            cw::Rng r1(0), r2(0);
            const ChwImage g = corrupt(gray, name, severity, r1), c = corrupt(rgb, name, severity, r2);
            for (size_t i = 0; i < gray.plane_size(); ++i) {
                const double luma = 0.299 * c.pixels[i] + 0.587 * c.pixels[gray.plane_size() + i] +
                                    0.114 * c.pixels[2 * gray.plane_size() + i];
                CHECK(g.pixels[i] == Approx(luma).margin(1e-6));
            }
        }
    // Elementwise noise on one channel is the same noise as on the first channel of a three-channel image
    // drawn from the same generator state (the field is C x H x W, channel-major).
    cw::Rng r1(3), r2(3);
    const ChwImage n1 = corrupt(gray, "gaussian_noise", 2, r1), n3 = corrupt(rgb, "gaussian_noise", 2, r2);
    for (size_t i = 0; i < gray.plane_size(); ++i) CHECK(n1.pixels[i] == n3.pixels[i]);
}

TEST_CASE("corruptions: uint8 images convert exactly, and corrupted() corrupts every image of a Dataset",
          "[corruptions]") {
    std::vector<uint8_t> all(256);
    for (int k = 0; k < 256; ++k) all[k] = static_cast<uint8_t>(k);
    const ChwImage f = to_float_image(all.data(), 1, 16, 16);
    std::vector<uint8_t> back(256);
    to_uint8(f, back.data());
    CHECK(back == all);  // k/255 -> k for every k, despite float round-off
    ChwImage half(1, 1, 2);
    half.pixels = {0.5f, 0.999f};
    uint8_t two[2];
    to_uint8(half, two);
    CHECK(two[0] == 127);  // truncation, as the script's np.uint8: 127.5 -> 127
    CHECK(two[1] == 254);

    Dataset d;
    d.name = "toy/test";
    d.channels = 3;
    d.height = d.width = 16;
    d.class_names = {"a", "b"};
    for (int i = 0; i < 6; ++i) {
        const ChwImage x = random_image(3, 16, 16, 100 + i);
        std::vector<uint8_t> bytes(x.pixels.size());
        to_uint8(x, bytes.data());
        d.pixels.insert(d.pixels.end(), bytes.begin(), bytes.end());
        d.labels.push_back(i % 2);
    }
    const Dataset a = corrupted(d, "shot_noise", 4, 7), b = corrupted(d, "shot_noise", 4, 7);
    const Dataset c = corrupted(d, "shot_noise", 4, 8);
    CHECK(a.name == "toy/test/shot_noise:4");
    CHECK(a.labels == d.labels);
    CHECK(a.class_names == d.class_names);
    CHECK(a.pixels.size() == d.pixels.size());
    CHECK(a.pixels == b.pixels);
    CHECK(a.pixels != c.pixels);
    CHECK(a.pixels != d.pixels);
    // Images draw from independent streams: no two images got the same noise.
    for (int i = 1; i < 6; ++i) CHECK(std::vector<uint8_t>(a.image(0), a.image(0) + 768) !=
                                      std::vector<uint8_t>(a.image(i), a.image(i) + 768));
    // A deterministic corruption at Dataset level is the per-image one, truncated to uint8.
    const Dataset p = corrupted(d, "pixelate", 5, 1);
    for (int64_t i = 0; i < d.size(); ++i) {
        cw::Rng unused(0);
        const ChwImage y = corrupt(to_float_image(d.image(i), 3, 16, 16), "pixelate", 5, unused);
        std::vector<uint8_t> want(y.pixels.size());
        to_uint8(y, want.data());
        CHECK(std::vector<uint8_t>(p.image(i), p.image(i) + 768) == want);
    }
}

TEST_CASE("corruptions: bad names, severities, fields and images are one-line errors naming them", "[corruptions]") {
    const ChwImage x = random_image(3, 8, 8, 1);
    cw::Rng rng(0);
    const std::string unknown = message_of([&] { corrupt(x, "fogg", 3, rng); });
    CHECK(unknown.find("unknown name 'fogg'") != std::string::npos);
    CHECK(unknown.find("gaussian_noise") != std::string::npos);  // lists the valid names
    for (int bad : {0, 6, -1}) {
        const std::string m = message_of([&] { corrupt(x, "fog", bad, rng); });
        CHECK(m == "fog: severity " + std::to_string(bad) + " out of range (expected 1 to 5)");
    }
    CHECK(message_of([&] { draw_corruption_field("snow", 9, 3, 8, 8, rng); }).find("snow: severity 9") == 0);
    CHECK(message_of([&] { corrupted(Dataset{}, "frost", 0, 1); }) == "frost: severity 0 out of range (expected 1 to 5)");

    CorruptionField f = draw_corruption_field("gaussian_noise", 1, 3, 8, 8, rng);
    f.arrays["normal"].pop_back();
    CHECK(message_of([&] { apply_corruption(x, "gaussian_noise", 1, f); }) ==
          "gaussian_noise: random field 'normal' has 191 values, expected 192");
    CHECK(message_of([&] { apply_corruption(x, "fog", 1, CorruptionField{}); }) ==
          "fog: random field has no array 'plasma'");
    CorruptionField glass = draw_corruption_field("glass_blur", 1, 3, 8, 8, rng);
    glass.arrays["dx"][7 * 8 + 7] = 5;
    CHECK(message_of([&] { apply_corruption(x, "glass_blur", 1, glass); }).find("glass_blur: field offset (5, ") == 0);

    ChwImage broken = x;
    broken.pixels.pop_back();
    CHECK(message_of([&] { corrupt(broken, "contrast", 1, rng); }) ==
          "contrast: image of shape 3x8x8 with 191 values is not a CHW image");
    CHECK(message_of([&] { draw_corruption_field("fog", 1, 0, 8, 8, rng); }) == "fog: image shape 0x8x8 is not valid");
    for (const std::string& m : {unknown, message_of([&] { corrupt(broken, "contrast", 1, rng); })})
        CHECK(m.find('\n') == std::string::npos);
}
