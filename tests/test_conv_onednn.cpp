// The oneDNN convolution path of the CPU backend (engine/cpu/onednn_conv.cpp) and the policy that picks it
// (engine/cpu/conv.cpp): fp32 results equal the native path (an independent implementation) to float rounding;
// bf16 results equal a float64 convolution of the bf16-rounded inputs to fp32 summation error, and the fp32 path to
// bf16 rounding; CLASSWISE_CONV / CLASSWISE_PRECISION parsing and the note when the CPU has no bf16.
// Seen failing with planted bugs: backward-weights written in a transposed kernel layout (fp32 parity, bf16 and
// gradcheck tests), bf16 inputs truncated instead of rounded (the float64 bound), bf16 silently computed in fp32
// (both bf16 bounds), the accumulate flag ignored, the cache key without the thread count, the bf16 fallback
// ignoring the CPU (the resolve and child-process tests).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/onednn_conv.h"
#include "tests/skip.h"
#include "tests/test_bf16.h"
#include "tests/test_process.h"
#include "tests/test_util.h"

using namespace cw;
using namespace cw_test;

namespace {

// Restores the backend's policy when a test ends, however it ends.
struct PolicySetting {
    ConvPolicy saved = cpu_backend().conv_policy();
    explicit PolicySetting(ConvPolicy p) { cpu_backend().set_conv_policy(p); }
    ~PolicySetting() { cpu_backend().set_conv_policy(saved); }
};

constexpr ConvPolicy kNative{ConvPath::Native, ConvPrecision::Fp32};
constexpr ConvPolicy kOneDnn{ConvPath::OneDnn, ConvPrecision::Fp32};
constexpr ConvPolicy kBf16{ConvPath::OneDnn, ConvPrecision::Bf16};

std::vector<float> uniform(size_t n, uint64_t seed) {
    std::vector<float> v(n);
    Rng(seed).fill_uniform(v.data(), n, -1.f, 1.f);
    return v;
}

// Largest |a - b| over the largest |b|: the error relative to the size of the result.
template <class A, class B>
double relative_difference(const std::vector<A>& a, const std::vector<B>& b) {
    REQUIRE(a.size() == b.size());
    double diff = 0, scale = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
        scale = std::max(scale, std::fabs(double(b[i])));
    }
    return diff / scale;
}

// The three results of a direct convolution in float64, by definition: y = x * w, gx = dL/dx and gw = dL/dw for
// L = sum(y . gy).
struct Direct {
    std::vector<double> y, gx, gw;
};

Direct direct_convolution(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& gy,
                          const ConvGeometry& g) {
    const int64_t oh_n = g.out_h(), ow_n = g.out_w();
    Direct d{std::vector<double>(size_t(g.n * g.k * oh_n * ow_n)), std::vector<double>(x.size()),
             std::vector<double>(w.size())};
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t k = 0; k < g.k; ++k)
            for (int64_t oh = 0; oh < oh_n; ++oh)
                for (int64_t ow = 0; ow < ow_n; ++ow) {
                    const size_t yi = size_t(((n * g.k + k) * oh_n + oh) * ow_n + ow);
                    for (int64_t c = 0; c < g.c; ++c)
                        for (int64_t r = 0; r < g.r; ++r)
                            for (int64_t s = 0; s < g.s; ++s) {
                                const int64_t ih = oh * g.stride - g.pad + r, iw = ow * g.stride - g.pad + s;
                                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                                const size_t xi = size_t(((n * g.c + c) * g.h + ih) * g.w + iw);
                                const size_t wi = size_t(((k * g.c + c) * g.r + r) * g.s + s);
                                d.y[yi] += double(x[xi]) * w[wi];
                                d.gx[xi] += double(gy[yi]) * w[wi];
                                d.gw[wi] += double(gy[yi]) * x[xi];
                            }
                }
    return d;
}

struct Results {
    std::vector<float> y, gx, gw, gw_accumulated, gx_combined, gw_combined;
};

// Every entry point of the backend's conv under the current policy; gw_accumulated starts from 0.25.
Results run_backend(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& gy,
                    const ConvGeometry& g) {
    CpuBackend& be = cpu_backend();
    Results r{std::vector<float>(gy.size(), NAN), std::vector<float>(x.size(), NAN), std::vector<float>(w.size(), NAN),
              std::vector<float>(w.size(), 0.25f), std::vector<float>(x.size(), NAN),
              std::vector<float>(w.size(), NAN)};
    be.conv2d_forward(x.data(), w.data(), r.y.data(), g);
    be.conv2d_backward_data(gy.data(), w.data(), r.gx.data(), g);
    be.conv2d_backward_filter(x.data(), gy.data(), r.gw.data(), g, false);
    be.conv2d_backward_filter(x.data(), gy.data(), r.gw_accumulated.data(), g, true);
    be.conv2d_backward(x.data(), w.data(), gy.data(), r.gx_combined.data(), r.gw_combined.data(), g);
    return r;
}

// {n, c, h, w, k, r, s, stride, pad}: stride 1 and 2, padding 0 and 1, 1x1, 3x3 and 4x4 kernels, one input channel,
// odd and non-square sizes, batch 1 and more.
const std::vector<ConvGeometry> kShapes = {
    {1, 1, 7, 7, 4, 3, 3, 1, 0},     // one channel, batch 1
    {3, 1, 28, 28, 8, 3, 3, 1, 0},   // the small CNN's first layer, fewer filters
    {2, 3, 9, 7, 8, 3, 3, 2, 1},     // RGB stem, stride 2, odd non-square
    {4, 16, 8, 8, 16, 3, 3, 1, 1},   // Winograd's shape in the native path
    {2, 32, 11, 11, 16, 3, 3, 1, 0},  // odd, no padding
    {2, 16, 9, 9, 32, 1, 1, 2, 0},   // strided 1x1 shortcut, odd input
    {3, 8, 5, 6, 8, 1, 1, 1, 0},     // pointwise
    {5, 32, 4, 4, 32, 3, 3, 1, 1},   // 4x4 maps
    {2, 4, 7, 7, 6, 4, 4, 2, 1},     // even kernel (the Wong MNIST net)
    {1, 8, 6, 5, 4, 3, 3, 2, 0},     // stride 2, no padding, batch 1
};

std::string shape_info(const ConvGeometry& g) {
    return "n " + std::to_string(g.n) + " c " + std::to_string(g.c) + " " + std::to_string(g.h) + "x" +
           std::to_string(g.w) + " k " + std::to_string(g.k) + " " + std::to_string(g.r) + "x" + std::to_string(g.s) +
           " stride " + std::to_string(g.stride) + " pad " + std::to_string(g.pad);
}

}  // namespace

TEST_CASE("onednn conv: fp32 forward, backward-data and backward-weights equal the native path", "[conv][onednn]") {
    uint64_t seed = 1;
    for (const ConvGeometry& g : kShapes) {
        INFO(shape_info(g));
        auto x = uniform(size_t(g.n * g.c * g.h * g.w), seed++), w = uniform(size_t(g.k * g.c * g.r * g.s), seed++);
        auto gy = uniform(size_t(g.n * g.k * g.out_h() * g.out_w()), seed++);
        Results native, onednn;
        {
            PolicySetting p(kNative);
            REQUIRE_FALSE(cpu_backend().uses_onednn(g));
            native = run_backend(x, w, gy, g);
        }
        {
            PolicySetting p(kOneDnn);
            REQUIRE(cpu_backend().uses_onednn(g));
            onednn = run_backend(x, w, gy, g);
        }
        // Sums of at most a few thousand O(1) products, each path rounding in its own order (and Winograd's
        // transforms a few times more): ~1e-6 of the result; 1e-5 leaves room and still catches any wrong term.
        CHECK(relative_difference(onednn.y, native.y) < 1e-5);
        CHECK(relative_difference(onednn.gx, native.gx) < 1e-5);
        CHECK(relative_difference(onednn.gw, native.gw) < 1e-5);
        CHECK(relative_difference(onednn.gw_accumulated, native.gw_accumulated) < 1e-5);
        CHECK(relative_difference(onednn.gx_combined, native.gx) < 1e-5);
        CHECK(relative_difference(onednn.gw_combined, native.gw) < 1e-5);
    }
}

TEST_CASE("onednn conv: bf16 equals a float64 convolution of the bf16-rounded inputs, and fp32 to bf16 precision",
          "[conv][onednn]") {
    if (!onednn_conv::cpu_has_bf16()) CW_SKIP("this CPU has no AVX512_BF16: bf16 convolutions fall back to fp32");
    uint64_t seed = 100;
    for (const ConvGeometry& g : kShapes) {
        INFO(shape_info(g));
        auto x = uniform(size_t(g.n * g.c * g.h * g.w), seed++), w = uniform(size_t(g.k * g.c * g.r * g.s), seed++);
        auto gy = uniform(size_t(g.n * g.k * g.out_h() * g.out_w()), seed++);
        const auto x0 = x, w0 = w, gy0 = gy;
        const Direct exact = direct_convolution(bf16_rounded(x), bf16_rounded(w), bf16_rounded(gy), g);
        const Direct unrounded = direct_convolution(x, w, gy, g);
        Results bf16;
        {
            PolicySetting p(kBf16);
            REQUIRE(cpu_backend().uses_onednn(g));
            bf16 = run_backend(x, w, gy, g);
        }
        // The products of bf16 numbers are exact in fp32, so what remains is fp32 summation of at most ~2,000
        // terms: at most 2.4e-7 of the result measured (AVX512_BF16, 2 threads), bounded here at 2e-6. Inputs
        // truncated instead of rounded (or left fp32) move the results by ~1e-3.
        CHECK(relative_difference(bf16.y, exact.y) < 2e-6);
        CHECK(relative_difference(bf16.gx, exact.gx) < 2e-6);
        CHECK(relative_difference(bf16.gw, exact.gw) < 2e-6);
        CHECK(relative_difference(bf16.gx_combined, exact.gx) < 2e-6);
        CHECK(relative_difference(bf16.gw_combined, exact.gw) < 2e-6);
        std::vector<double> accumulated = exact.gw;
        for (double& v : accumulated) v += 0.25;
        CHECK(relative_difference(bf16.gw_accumulated, accumulated) < 2e-6);
        // Against the unrounded fp32 convolution: each input moves by up to 2^-9 of itself, so each product by
        // up to 2^-8; relative to the largest result that stays below 1% and, with random signs, above 1e-4.
        for (auto [got, want] : {std::pair{&bf16.y, &unrounded.y}, {&bf16.gx, &unrounded.gx}, {&bf16.gw, &unrounded.gw}}) {
            CHECK(relative_difference(*got, *want) < 1e-2);
            CHECK(relative_difference(*got, *want) > 1e-4);
        }
        // The fp32 buffers (master weights among them) are read, never rounded in place.
        CHECK(x == x0);
        CHECK(w == w0);
        CHECK(gy == gy0);
    }
}

TEST_CASE("onednn conv: built primitives are cached per shape, direction and thread count", "[conv][onednn]") {
    PolicySetting p(kOneDnn);
    const ConvGeometry g{2, 5, 9, 9, 7, 3, 3, 2, 1};  // a shape no other test uses
    auto x = uniform(size_t(g.n * g.c * g.h * g.w), 7), w = uniform(size_t(g.k * g.c * 9), 8);
    std::vector<float> y(size_t(g.n * g.k * g.out_h() * g.out_w())), again(y.size());
    const size_t before = onednn_conv::cached_plans();
    cpu_backend().conv2d_forward(x.data(), w.data(), y.data(), g);
    REQUIRE(onednn_conv::cached_plans() == before + 1);
    cpu_backend().conv2d_forward(x.data(), w.data(), again.data(), g);
    CHECK(onednn_conv::cached_plans() == before + 1);
    CHECK(again == y);
    const int threads = cpu_threads();
    set_cpu_threads(threads == 1 ? 2 : 1);
    cpu_backend().conv2d_forward(x.data(), w.data(), again.data(), g);
    set_cpu_threads(threads);
    CHECK(onednn_conv::cached_plans() == before + 2);
    CHECK(relative_difference(again, y) < 1e-6);
}

TEST_CASE("onednn conv: the time split counts every convolution and reorder it ran, within the wall time",
          "[conv][onednn]") {
    PolicySetting p(kOneDnn);
    const ConvGeometry g{8, 32, 12, 12, 32, 3, 3, 1, 1};
    auto x = uniform(size_t(g.n * g.c * g.h * g.w), 11), w = uniform(size_t(g.k * g.c * 9), 12),
         gy = uniform(size_t(g.n * g.k * g.out_h() * g.out_w()), 13);
    std::vector<float> y(gy.size()), gx(x.size()), gw(w.size());
    cpu_backend().conv2d_forward(x.data(), w.data(), y.data(), g);  // the plans are built outside the window
    cpu_backend().conv2d_backward(x.data(), w.data(), gy.data(), gx.data(), gw.data(), g);
    onednn_conv::reset_time_split();
    const auto zero = onednn_conv::time_split();
    CHECK((zero.convolutions == 0 && zero.reorders == 0 && zero.convolution_ms == 0 && zero.reorder_ms == 0));
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i) cpu_backend().conv2d_forward(x.data(), w.data(), y.data(), g);
    cpu_backend().conv2d_backward(x.data(), w.data(), gy.data(), gx.data(), gw.data(), g);  // data and weights
    const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const auto split = onednn_conv::time_split();
    CHECK(split.convolutions == 5);
    // oneDNN's JIT kernels take 32 channels in a blocked layout, never our plain NCHW, so some reorders run; each
    // execution has at most three (its two inputs in, its output back).
    CHECK(split.reorders > 0);
    CHECK(split.reorders <= 3 * split.convolutions);
    CHECK(split.convolution_ms > 0);
    CHECK(split.reorder_ms > 0);
    CHECK(split.convolution_ms + split.reorder_ms <= wall_ms);
    // Every output here comes back from a blocked layout (32 channels), so that part is counted, and it is a part.
    CHECK(split.output_reorder_ms > 0);
    CHECK(split.output_reorder_ms < split.reorder_ms);
    CHECK(zero.output_reorder_ms == 0);
}

TEST_CASE("onednn conv: bf16 activations of 16k channels are converted by bf16_blocked, the rest by oneDNN",
          "[conv][onednn]") {
    if (!onednn_conv::cpu_has_bf16()) CW_SKIP("this CPU has no AVX512_BF16: bf16 convolutions fall back to fp32");
    PolicySetting p(kBf16);
    for (const auto& [g, ours] : {std::pair{ConvGeometry{4, 16, 8, 8, 16, 3, 3, 1, 1}, 4},
                                  // 3 input channels: only the incoming gradient (16 channels) is ours, in
                                  // backward-data and backward-weights.
                                  {ConvGeometry{2, 3, 9, 7, 16, 3, 3, 2, 1}, 2}}) {
        INFO(shape_info(g));
        auto x = uniform(size_t(g.n * g.c * g.h * g.w), 21), w = uniform(size_t(g.k * g.c * 9), 22),
             gy = uniform(size_t(g.n * g.k * g.out_h() * g.out_w()), 23);
        std::vector<float> y(gy.size()), gx(x.size()), gw(w.size());
        onednn_conv::reset_time_split();
        cpu_backend().conv2d_forward(x.data(), w.data(), y.data(), g);
        cpu_backend().conv2d_backward(x.data(), w.data(), gy.data(), gx.data(), gw.data(), g);
        const auto split = onednn_conv::time_split();
        CHECK(split.convolutions == 3);
        CHECK(split.reorders_by_bf16_blocked == ours);
        CHECK(split.reorders > split.reorders_by_bf16_blocked);  // the weights stay with oneDNN's reorder
    }
}

TEST_CASE("onednn conv: two threads convolving at once get their own results", "[conv][onednn]") {
    PolicySetting p(kOneDnn);
    const ConvGeometry g{4, 16, 12, 12, 16, 3, 3, 1, 1};
    auto x = uniform(size_t(g.n * g.c * g.h * g.w), 9), w = uniform(size_t(g.k * g.c * 9), 10);
    auto gy = uniform(size_t(g.n * g.k * 144), 11);
    std::vector<float> y_ref(gy.size()), gw_ref(w.size());
    cpu_backend().conv2d_forward(x.data(), w.data(), y_ref.data(), g);
    cpu_backend().conv2d_backward_filter(x.data(), gy.data(), gw_ref.data(), g, false);
    bool same[2] = {true, true};
    auto work = [&](int t) {
        std::vector<float> y(y_ref.size()), gw(gw_ref.size());
        for (int rep = 0; rep < 20; ++rep) {
            if (t == 0) {
                cpu_backend().conv2d_forward(x.data(), w.data(), y.data(), g);
                same[t] = same[t] && relative_difference(y, y_ref) < 1e-6;
            } else {
                cpu_backend().conv2d_backward_filter(x.data(), gy.data(), gw.data(), g, false);
                same[t] = same[t] && relative_difference(gw, gw_ref) < 1e-6;
            }
        }
    };
    std::thread a(work, 0), b(work, 1);
    a.join();
    b.join();
    CHECK(same[0]);
    CHECK(same[1]);
}

TEST_CASE("gradcheck: conv2d through oneDNN fp32 (stride, padding, bias)", "[gradcheck][ops][onednn]") {
    PolicySetting p(kOneDnn);
    using In = const std::vector<Tensor>&;
    require_gradcheck([](In t) { return conv2d(t[0], t[1], t[2], 1, 1); },
                      {randn({2, 3, 5, 5}, 41), randn({4, 3, 3, 3}, 42, 0.5f), randn({4}, 43)});
    require_gradcheck([](In t) { return conv2d(t[0], t[1], {}, 2, 1); }, {randn({2, 2, 6, 5}, 44), randn({3, 2, 3, 3}, 45, 0.5f)});
    require_gradcheck([](In t) { return conv2d(t[0], t[1], t[2], 2, 0); },
                      {randn({3, 2, 5, 5}, 46), randn({2, 2, 1, 1}, 47, 0.5f), randn({2}, 48)});
    require_gradcheck([](In t) { return conv2d(t[0], t[1], {}, 1, 0); }, {randn({2, 1, 6, 6}, 49), randn({3, 1, 3, 3}, 50, 0.5f)});
}

TEST_CASE("conv policy: auto sends oneDNN the layers it won in the probe, native keeps Winograd's", "[conv][onednn]") {
    const int64_t n = 128;
    {
        PolicySetting p({ConvPath::Auto, ConvPrecision::Fp32});
        CHECK(cpu_backend().uses_onednn({n, 3, 32, 32, 64, 3, 3, 1, 1}));     // stem
        CHECK(cpu_backend().uses_onednn({n, 64, 32, 32, 128, 3, 3, 2, 1}));   // stride 2
        CHECK(cpu_backend().uses_onednn({n, 64, 32, 32, 128, 1, 1, 2, 0}));   // 1x1 shortcut
        CHECK(cpu_backend().uses_onednn({n, 512, 4, 4, 512, 3, 3, 1, 1}));    // 4x4 maps
        CHECK(cpu_backend().uses_onednn({n, 32, 26, 26, 32, 3, 3, 1, 0}));    // small CNN, 32 channels
        CHECK(cpu_backend().uses_onednn({n, 64, 10, 10, 64, 3, 3, 1, 0}));    // small CNN, 8x8 output
        CHECK_FALSE(cpu_backend().uses_onednn({n, 64, 32, 32, 64, 3, 3, 1, 1}));
        CHECK_FALSE(cpu_backend().uses_onednn({n, 128, 16, 16, 128, 3, 3, 1, 1}));
        CHECK_FALSE(cpu_backend().uses_onednn({n, 256, 8, 8, 256, 3, 3, 1, 1}));
        CHECK_FALSE(cpu_backend().uses_onednn({0, 3, 32, 32, 64, 3, 3, 2, 1}));  // empty batch: nothing to run
    }
    {
        PolicySetting p(kNative);
        CHECK_FALSE(cpu_backend().uses_onednn({n, 64, 32, 32, 128, 3, 3, 2, 1}));
    }
    {
        PolicySetting p({ConvPath::Native, ConvPrecision::Bf16});  // bf16 exists only in oneDNN
        CHECK(cpu_backend().uses_onednn({n, 64, 32, 32, 64, 3, 3, 1, 1}));
    }
}

TEST_CASE("CLASSWISE_CONV and CLASSWISE_PRECISION: the documented values, anything else a one-line error",
          "[conv][onednn]") {
    CHECK(parse_conv_path(nullptr) == ConvPath::OneDnn);  // the default
    CHECK(parse_conv_path("") == ConvPath::OneDnn);
    CHECK(parse_conv_path("native") == ConvPath::Native);
    CHECK(parse_conv_path("onednn") == ConvPath::OneDnn);
    CHECK(parse_conv_path("auto") == ConvPath::Auto);
    CHECK(parse_conv_precision(nullptr) == ConvPrecision::Fp32);
    CHECK(parse_conv_precision("fp32") == ConvPrecision::Fp32);
    CHECK(parse_conv_precision("bf16") == ConvPrecision::Bf16);
    for (const char* bad : {"oneDNN", "1", "native ", "dnnl"})
        CHECK(error_of<Error>([&] { parse_conv_path(bad); }) ==
              "CLASSWISE_CONV must be auto, onednn or native, got '" + std::string(bad) + "'");
    for (const char* bad : {"BF16", "fp16", "32"})
        CHECK(error_of<Error>([&] { parse_conv_precision(bad); }) ==
              "CLASSWISE_PRECISION must be fp32 or bf16, got '" + std::string(bad) + "'");
}

TEST_CASE("CLASSWISE_PRECISION=bf16 without AVX512_BF16 falls back to fp32 with a one-line note", "[conv][onednn]") {
    std::string note;
    ConvPolicy p = resolve_conv_policy(ConvPath::Auto, ConvPrecision::Bf16, false, &note);
    CHECK(p.path == ConvPath::Auto);
    CHECK(p.precision == ConvPrecision::Fp32);
    CHECK(note == "classwise: CLASSWISE_PRECISION=bf16 but this CPU has no AVX512_BF16: convolutions run in fp32");
    p = resolve_conv_policy(ConvPath::Native, ConvPrecision::Bf16, true, &note);
    CHECK(p.precision == ConvPrecision::Bf16);
    CHECK(note.empty());
    p = resolve_conv_policy(ConvPath::OneDnn, ConvPrecision::Fp32, false, &note);
    CHECK(p.precision == ConvPrecision::Fp32);
    CHECK(note.empty());
}

// Run in a child process with its own environment (below): the policy the backend read, after a few convolutions.
TEST_CASE("conv policy of this process (run by the tests below)", "[.conv_policy]") {
    const ConvGeometry g{2, 3, 6, 6, 4, 3, 3, 1, 1};
    auto x = uniform(size_t(g.n * g.c * 36), 1), w = uniform(size_t(g.k * g.c * 9), 2);
    std::vector<float> y(size_t(g.n * g.k * 36));
    for (int i = 0; i < 3; ++i) cpu_backend().conv2d_forward(x.data(), w.data(), y.data(), g);
    const ConvPolicy p = cpu_backend().conv_policy();
    std::printf("policy %d %d\n", int(p.path), int(p.precision));
}

TEST_CASE("CLASSWISE_CONV / CLASSWISE_PRECISION reach the backend; the bf16 fallback note is printed once",
          "[conv][onednn]") {
    const std::string self = "'" + (repo_root() / "build/tests/classwise_tests").string() + "' '[.conv_policy]' 2>&1";
    auto run = [&](const std::string& env) {
        const auto out = run_shell("env -u CLASSWISE_CONV -u CLASSWISE_PRECISION " + env + " " + self);
        INFO(out.text);
        return out;
    };
    CHECK(run("").text.find("policy 1 0\n") != std::string::npos);  // default: onednn, fp32
    CHECK(run("CLASSWISE_CONV=native").text.find("policy 0 0\n") != std::string::npos);
    CHECK(run("CLASSWISE_CONV=auto").text.find("policy 2 0\n") != std::string::npos);
    CHECK(run("CLASSWISE_CONV=onednn CLASSWISE_PRECISION=fp32").text.find("policy 1 0\n") != std::string::npos);
    const auto bad = run("CLASSWISE_CONV=fast");
    CHECK(bad.code != 0);
    CHECK(bad.text.find("CLASSWISE_CONV must be auto, onednn or native, got 'fast'") != std::string::npos);
    // DNNL_MAX_CPU_ISA caps what oneDNN may use: an AVX-512 CPU without bf16, as far as the backend can tell.
    const std::string note = "CLASSWISE_PRECISION=bf16 but this CPU has no AVX512_BF16";
    const auto capped = run("CLASSWISE_PRECISION=bf16 DNNL_MAX_CPU_ISA=AVX512_CORE");
    CHECK(capped.text.find("policy 1 0\n") != std::string::npos);
    const size_t first = capped.text.find(note);
    CHECK(first != std::string::npos);
    CHECK(capped.text.find(note, first + 1) == std::string::npos);
    if (onednn_conv::cpu_has_bf16()) {
        const auto native_bf16 = run("CLASSWISE_PRECISION=bf16");
        CHECK(native_bf16.text.find("policy 1 1\n") != std::string::npos);
        CHECK(native_bf16.text.find(note) == std::string::npos);
    }
}
