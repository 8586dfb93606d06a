// blocked_bias_relu::to_nchw_plain (engine/cpu/blocked_bias_relu.cpp), which brings a oneDNN fp32 convolution's
// nChw16c output back into NCHW in place of oneDNN's reorder: every bit lands where NCHW wants it, -0 and NaN
// payloads included, for planes of whole and partial 16-pixel vectors and for an output large enough to be written
// with non-temporal stores.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "engine/cpu/blocked_bias_relu.h"
#include "engine/rng.h"
#include "tests/skip.h"
#include "tests/test_util.h"

using namespace cw;

namespace {

struct Aligned {
    void operator()(void* p) const { std::free(p); }
};

// Random bit patterns (NaNs with payloads, -0, denormals among them) in blocked [n, c / 16, hw, 16], converted,
// checked against the index arithmetic of the two layouts.
void check_plain(int64_t n, int64_t c, int64_t hw) {
    const size_t count = static_cast<size_t>(n * c * hw), bytes = (count * sizeof(float) + 63) / 64 * 64;
    std::unique_ptr<float, Aligned> blocked(static_cast<float*>(std::aligned_alloc(64, bytes)));
    std::unique_ptr<float, Aligned> y(static_cast<float*>(std::aligned_alloc(64, bytes)));
    Rng rng(static_cast<uint64_t>(n * 1000003 + c * 1009 + hw));
    std::vector<uint32_t> bits(count);
    for (uint32_t& b : bits) b = static_cast<uint32_t>(rng.next_u64());
    bits[0] = 0x80000000u;  // -0
    bits[1] = 0x7fc01234u;  // a quiet NaN with a payload
    std::memcpy(blocked.get(), bits.data(), count * sizeof(float));
    blocked_bias_relu::to_nchw_plain(blocked.get(), y.get(), n, c, hw);
    std::vector<uint32_t> got(count);
    std::memcpy(got.data(), y.get(), count * sizeof(float));
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t p = 0; p < hw; ++p)
                wrong += got[size_t((i * c + ch) * hw + p)] != bits[size_t(((i * (c / 16) + ch / 16) * hw + p) * 16 + ch % 16)];
    CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("to_nchw_plain: every bit of the blocked output lands where NCHW wants it", "[conv][onednn]") {
    if (!blocked_bias_relu::supported(16)) CW_SKIP("this CPU has no AVX-512: oneDNN's reorder brings outputs back");
    SECTION("planes of partial vectors (4 x 5 = 20 pixels), stored with masks") { check_plain(3, 32, 20); }
    SECTION("small planes of whole vectors") { check_plain(2, 48, 16); }
    SECTION("an output of 16 MB or more: non-temporal stores") { check_plain(16, 64, 4096); }
}
