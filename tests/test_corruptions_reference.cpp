// Every corruption at every severity on the fixed images (and one gray, non-square image), fed the random field
// the Python reference drew (tools/make_corruption_fixtures.py), against the reference's output. The tolerance
// of each corruption and its reason are in kTolerance (and docs/corruptions.md); CW_CORRUPTION_REPORT=1 prints
// the measured differences.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "tests/test_corruptions_fixtures.h"

using namespace cw::data;
using namespace cw_corruption_test;

namespace {

struct Tolerance {
    double max_abs;
    const char* why;
};

// Same double arithmetic as the reference, in the same order; what is left is the float32 rounding of the result
// (measured: 0 for all of these on Debian 12).
constexpr const char* kSameArithmetic = "same double arithmetic as the reference; float32 output rounding only";
// These truncate (uint8) or threshold an intermediate value, where one differing bit would jump by >= 1/255, so
// the arithmetic order of scipy/numpy is followed bit for bit (measured 0); the tolerance stays tight on purpose.
constexpr const char* kBitExact = "truncates or thresholds intermediates: bit-exact by construction";

const std::map<std::string, Tolerance>& tolerances() {
    static const std::map<std::string, Tolerance> t = {
        {"gaussian_noise", {1e-6, kSameArithmetic}},
        {"shot_noise", {1e-6, "Poisson quantile: an integer count, exact unless u sits within 1e-14 of a CDF step"}},
        {"impulse_noise", {1e-6, kSameArithmetic}},
        {"speckle_noise", {1e-6, kSameArithmetic}},
        {"defocus_blur", {1e-6, "kernel in float32 as OpenCV builds it; taps summed in another order (measured 1.5e-8)"}},
        {"glass_blur", {1e-6, kBitExact}},
        {"motion_blur", {1e-6, kSameArithmetic}},
        {"zoom_blur", {1e-6, "float32 accumulation as the script's; same order"}},
        {"gaussian_blur", {1e-6, kSameArithmetic}},
        {"snow", {1e-6, kBitExact}},
        {"frost", {1e-6, kSameArithmetic}},
        {"fog", {1e-6, kSameArithmetic}},
        {"spatter", {1e-6, kBitExact}},
        {"brightness", {1e-6, kSameArithmetic}},
        {"contrast", {1e-6, kSameArithmetic}},
        {"saturate", {1e-6, kSameArithmetic}},
        {"elastic_transform", {1e-6, kSameArithmetic}},
        {"pixelate", {1e-6, "Pillow's float ('F') BOX resample: same coefficients, float32 between passes"}},
        // The same libjpeg-turbo as PIL's on Debian 12 gives identical bytes (measured 0); another build may round
        // its IDCT differently by a level, which a wrong quality or subsampling would exceed by far.
        {"jpeg_compression", {1.0 / 255 + 1e-6, "libjpeg build differences: one level; mean must stay < 0.1/255"}},
    };
    return t;
}

double mean_abs_diff(const ChwImage& a, const ChwImage& b) {
    double total = 0;
    for (size_t i = 0; i < a.pixels.size(); ++i) total += std::fabs(double(a.pixels[i]) - b.pixels[i]);
    return total / double(a.pixels.size());
}

}  // namespace

TEST_CASE("corruptions: every corruption at every severity equals the Python reference", "[corruptions]") {
    const std::string dir = fixture_dir();
    if (dir.empty()) FAIL("tests/fixtures/corruptions missing (tools/make_corruption_fixtures.py)");
    const std::vector<Case> cases = read_manifest(dir);
    const bool report = std::getenv("CW_CORRUPTION_REPORT") != nullptr;
    std::map<std::string, double> worst;
    std::map<std::string, std::set<int>> severities;
    for (const Case& c : cases) {
        INFO(c.name << " severity " << c.severity << " on " << c.input);
        const auto tol = tolerances().find(c.name);
        REQUIRE(tol != tolerances().end());
        const Loaded l = load_case(dir, c);
        const ChwImage got = apply_corruption(l.input, c.name, c.severity, l.field);
        REQUIRE(got.channels == l.expected.channels);
        REQUIRE(got.height == l.expected.height);
        REQUIRE(got.width == l.expected.width);
        const double d = max_abs_diff(got, l.expected);
        INFO("max |ours - reference| = " << d << ", tolerance " << tol->second.max_abs << " (" << tol->second.why << ")");
        CHECK(d <= tol->second.max_abs);
        if (c.name == "jpeg_compression") CHECK(mean_abs_diff(got, l.expected) < 0.1 / 255);
        worst[c.name] = std::max(worst[c.name], d);
        if (c.input != "gray") severities[c.name].insert(c.severity);
        if (report) std::printf("%-18s s%d %-8s %.3g\n", c.name.c_str(), c.severity, c.input.c_str(), d);
    }
    // The fixtures cover every corruption at every severity.
    for (const auto& name : corruption_names()) {
        INFO(name);
        CHECK(severities[name] == std::set<int>{1, 2, 3, 4, 5});
    }
    if (report)
        for (const auto& [name, d] : worst) std::printf("max %-18s %.3g\n", name.c_str(), d);
}
