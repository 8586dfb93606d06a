// engine/cpu/maxpool2x2.cpp: the 2x2 max-pool row, its AVX-512 kernel and its portable loop, against the choice rule
// written out here (the first maximum wins ties, a NaN takes over), bit for bit, with the chosen indices.
// Seen failing with planted bugs: the odd columns read as even (a wrong permute), ties won by the later candidate
// (>= for >), NaN not taking over, the tail's second half never loaded (widths 9-15).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/cpu/maxpool2x2.h"
#include "engine/rng.h"

namespace {

struct Row {
    std::vector<float> y;
    std::vector<int32_t> at;
};

Row by_rule(const std::vector<float>& r0, const std::vector<float>& r1, int64_t ow_n, int32_t r0_at, int32_t r1_at) {
    Row out{std::vector<float>(size_t(ow_n)), std::vector<int32_t>(size_t(ow_n))};
    for (int64_t ow = 0; ow < ow_n; ++ow) {
        const float v[4] = {r0[size_t(2 * ow)], r0[size_t(2 * ow + 1)], r1[size_t(2 * ow)], r1[size_t(2 * ow + 1)]};
        const int32_t where[4] = {r0_at + int32_t(2 * ow), r0_at + int32_t(2 * ow + 1), r1_at + int32_t(2 * ow),
                                  r1_at + int32_t(2 * ow + 1)};
        int k = 0;
        for (int j = 1; j < 4; ++j)
            if (std::isnan(v[j]) || v[j] > v[k]) k = j;
        out.y[size_t(ow)] = v[k];
        out.at[size_t(ow)] = where[k];
    }
    return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("maxpool2x2 row: both kernels follow the choice rule bit for bit", "[pool]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t ow_n = 1; ow_n <= 40; ++ow_n) {
        // Values from a small set, so that ties are common; some NaNs and signed zeros.
        std::vector<float> r0(size_t(2 * ow_n)), r1(r0.size());
        cw::Rng rng(static_cast<uint64_t>(ow_n));
        for (auto* r : {&r0, &r1})
            for (float& v : *r) {
                const float u = rng.uniform();
                v = u < 0.05f ? nan : u < 0.1f ? -0.f : std::floor(u * 6) - 2;
            }
        const int32_t r0_at = 1000, r1_at = 2000;
        const Row want = by_rule(r0, r1, ow_n, r0_at, r1_at);
        for (auto kernel : {cw::maxpool2x2::row, cw::maxpool2x2::row_portable}) {
            Row got{std::vector<float>(size_t(ow_n)), std::vector<int32_t>(size_t(ow_n))};
            kernel(r0.data(), r1.data(), got.y.data(), got.at.data(), ow_n, r0_at, r1_at);
            INFO("ow_n " << ow_n << (kernel == cw::maxpool2x2::row ? " (dispatched)" : " (portable)"));
            CHECK(same_bits(got.y, want.y));
            CHECK(got.at == want.at);
        }
    }
}

TEST_CASE("maxpool2x2 row: ties and NaN, by hand", "[pool]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // Pixel 0: 1, 3 | 3, 0 -> 3 from row 0 (the first of the tied maxima), index r0_at + 1.
    // Pixel 1: 2, 2 | NaN, 1 -> NaN from row 1 column 2 (a NaN takes over; 1 does not beat it).
    const std::vector<float> r0 = {1, 3, 2, 2}, r1 = {3, 0, nan, 1};
    float y[2];
    int32_t at[2];
    cw::maxpool2x2::row(r0.data(), r1.data(), y, at, 2, 10, 20);
    CHECK(y[0] == 3.f);
    CHECK(at[0] == 11);
    CHECK(std::isnan(y[1]));
    CHECK(at[1] == 22);
}
