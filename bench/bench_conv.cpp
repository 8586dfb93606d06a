// make bench: each convolution shape of the benchmarked models, alone: forward, backward-data and backward-filter
// times and the GFLOP/s they reach, so a change to the conv kernels can be judged layer by layer; each shape under
// each convolution setting (bench/conv_variants.h: native, oneDNN fp32, oneDNN bf16 by default).
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/conv_variants.h"
#include "engine/backend.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/thin_conv_data.h"
#include "engine/rng.h"

using namespace cw;
using cw_bench::median_ms;

namespace {


std::vector<float> uniform(size_t n, uint64_t seed) {
    std::vector<float> v(n);
    Rng(seed).fill_uniform(v.data(), n, -1.f, 1.f);
    return v;
}

struct Shape {
    const char* name;
    ConvGeometry g;
};

void bench_shape(const Shape& s, const std::string& variant, int reps, double totals[3]) {
    const ConvGeometry& g = s.g;
    Backend& be = cpu_backend();
    const int64_t p = g.out_h() * g.out_w();
    auto x = uniform(size_t(g.n * g.c * g.h * g.w), 1), w = uniform(size_t(g.k * g.c * g.r * g.s), 2);
    auto gy = uniform(size_t(g.n * g.k * p), 3);
    std::vector<float> y(gy.size()), gx(x.size()), gw(w.size());
    const double gflop = 2.0 * g.n * g.k * p * g.c * g.r * g.s / 1e9;
    // One untimed call per direction first: oneDNN builds its kernels for a new shape then (milliseconds).
    const double fwd = median_ms([&] { be.conv2d_forward(x.data(), w.data(), y.data(), g); }, 1, reps);
    const double bwd_data = median_ms([&] { be.conv2d_backward_data(gy.data(), w.data(), gx.data(), g); }, 1, reps);
    const double bwd_filter =
        median_ms([&] { be.conv2d_backward_filter(x.data(), gy.data(), gw.data(), g, false); }, 1, reps);
    totals[0] += fwd, totals[1] += bwd_data, totals[2] += bwd_filter;
    std::printf("%-26s %-7s %7.2f ms %6.0f GF/s | data %7.2f ms %6.0f GF/s | filter %7.2f ms %6.0f GF/s\n", s.name,
                variant.c_str(), fwd, gflop / fwd * 1e3, bwd_data, gflop / bwd_data * 1e3, bwd_filter,
                gflop / bwd_filter * 1e3);
    if (cpu_backend().uses_onednn(g)) {  // which oneDNN kernels ran (jit:avx512_core, jit_bf16:..., gemm:...)
        using onednn_conv::Direction;
        const ConvPrecision p = cpu_backend().conv_policy().precision;
        // The data gradient onto few input channels runs in the direct kernel, not oneDNN (engine/cpu/conv.cpp).
        const std::string data = thin_conv_data::applies(g) ? "direct (thin_conv_data)"
                                                            : onednn_conv::implementation(g, Direction::BackwardData, p);
        std::printf("%-34s oneDNN %s / %s / %s\n", "", onednn_conv::implementation(g, Direction::Forward, p).c_str(),
                    data.c_str(), onednn_conv::implementation(g, Direction::BackwardWeights, p).c_str());
    }
}

}  // namespace

int main(int argc, char** argv) {
    // [--quick] [--conv native,onednn,bf16] [substring]: fewer repetitions; the convolution settings to compare;
    // only the shapes whose name contains the substring.
    bool quick = false;
    std::string only, conv = "native,onednn,bf16", error;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") quick = true;
        else if (a == "--conv" && i + 1 < argc) conv = argv[++i];
        else only = a;
    }
    std::vector<cw_bench::ConvVariant> variants;
    if (!cw_bench::parse_conv_variants(conv, &variants, &error)) {
        std::fprintf(stderr, "bench_conv: --conv: %s\n", error.c_str());
        return 2;
    }
    const int reps = quick ? 3 : 7;
    std::printf("classwise CPU conv benchmark, batch 128, %d OpenMP threads (median of %d)\n", omp_get_max_threads(),
                reps);
    const int64_t n = 128;
    // {n, c, h, w, k, r, s, stride, pad}
    const std::vector<Shape> resnet = {
        {"resnet stem 3->64 32x32", {n, 3, 32, 32, 64, 3, 3, 1, 1}},
        {"resnet 64->64 32x32", {n, 64, 32, 32, 64, 3, 3, 1, 1}},
        {"resnet 64->128 s2", {n, 64, 32, 32, 128, 3, 3, 2, 1}},
        {"resnet 128->128 16x16", {n, 128, 16, 16, 128, 3, 3, 1, 1}},
        {"resnet 128->256 s2", {n, 128, 16, 16, 256, 3, 3, 2, 1}},
        {"resnet 256->256 8x8", {n, 256, 8, 8, 256, 3, 3, 1, 1}},
        {"resnet 256->512 s2", {n, 256, 8, 8, 512, 3, 3, 2, 1}},
        {"resnet 512->512 4x4", {n, 512, 4, 4, 512, 3, 3, 1, 1}},
        {"resnet shortcut 1x1 s2", {n, 64, 32, 32, 128, 1, 1, 2, 0}},
    };
    // How often each shape occurs in PreAct ResNet-18, to weigh the totals like a real step.
    const int resnet_count[] = {1, 4, 1, 3, 1, 3, 1, 3, 1};
    const std::vector<Shape> small = {
        {"small 1->32 28x28", {n, 1, 28, 28, 32, 3, 3, 1, 0}},
        {"small 32->32 26x26", {n, 32, 26, 26, 32, 3, 3, 1, 0}},
        {"small 32->64 12x12", {n, 32, 12, 12, 64, 3, 3, 1, 0}},
        {"small 64->64 10x10", {n, 64, 10, 10, 64, 3, 3, 1, 0}},
    };
    const ConvPolicy saved = cpu_backend().conv_policy();
    std::vector<std::array<double, 3>> t_resnet(variants.size()), t_small(variants.size());
    for (size_t i = 0; i < resnet.size(); ++i) {
        if (std::string(resnet[i].name).find(only) == std::string::npos) continue;
        for (size_t v = 0; v < variants.size(); ++v) {
            cpu_backend().set_conv_policy(variants[v].policy);
            double t[3] = {0, 0, 0};
            bench_shape(resnet[i], variants[v].name, reps, t);
            for (int j = 0; j < 3; ++j) t_resnet[v][j] += resnet_count[i] * t[j];
        }
    }
    for (const auto& s : small) {
        if (std::string(s.name).find(only) == std::string::npos) continue;
        for (size_t v = 0; v < variants.size(); ++v) {
            cpu_backend().set_conv_policy(variants[v].policy);
            bench_shape(s, variants[v].name, reps, t_small[v].data());
        }
    }
    cpu_backend().set_conv_policy(saved);
    for (size_t v = 0; v < variants.size(); ++v) {
        const auto &r = t_resnet[v], &m = t_small[v];
        std::printf("%-7s PreAct ResNet-18 convs, weighted by occurrence: forward %.0f ms, data %.0f ms, filter %.0f ms\n",
                    variants[v].name.c_str(), r[0], r[1], r[2]);
        std::printf("%-7s small CNN convs: forward %.1f ms, data %.1f ms, filter %.1f ms\n", variants[v].name.c_str(),
                    m[0], m[1], m[2]);
    }
    return 0;
}
