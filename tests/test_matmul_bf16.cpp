// Matrix products under the bf16 policy (engine/cpu/onednn_matmul.cpp through CpuBackend::gemm): every
// transposition equals a float64 product of the bf16-rounded operands to fp32 summation error, leaves c's padding
// alone and gives the same bits on 1 and 2 threads; a scaled or accumulating GEMM stays fp32; the linear layer's
// output and both its gradients come out of a training step's precision scope in bf16.
// Seen failing with planted bugs: the bf16 path never taken (every bf16 bound), operands truncated instead of
// rounded (the bound), a transposed operand read with the other operand's strides, and c's leading dimension
// taken as n (the padding check).
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/precision_scope.h"
#include "engine/ops.h"
#include "tests/skip.h"
#include "tests/test_bf16.h"
#include "tests/test_util.h"

using namespace cw;
using cw_test::bf16_rounded;

namespace {

#define CW_SKIP_WITHOUT_BF16() \
    if (!onednn_conv::cpu_has_bf16()) CW_SKIP("this CPU has no AVX512_BF16: bf16 matrix products fall back to fp32")

std::vector<float> uniform(size_t n, uint64_t seed) {
    std::vector<float> v(n);
    Rng(seed).fill_uniform(v.data(), n, -1.f, 1.f);
    return v;
}

// op(a) op(b) in float64, row-major with leading dimensions, and beside it sum |a_ik b_kj| (the scale of fp32's
// summation error).
struct Exact {
    std::vector<double> c, scale;
};
Exact exact_product(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const std::vector<float>& a, int64_t lda,
                    const std::vector<float>& b, int64_t ldb) {
    Exact e{std::vector<double>(size_t(m * n)), std::vector<double>(size_t(m * n))};
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
            for (int64_t p = 0; p < k; ++p) {
                const double x = ta ? a[p * lda + i] : a[i * lda + p], y = tb ? b[j * ldb + p] : b[p * ldb + j];
                e.c[i * n + j] += x * y;
                e.scale[i * n + j] += std::fabs(x * y);
            }
    return e;
}

// The largest error of c (m x n, leading dimension ldc) against e, in units of each entry's summation scale.
double worst_error(const std::vector<float>& c, int64_t ldc, const Exact& e, int64_t m, int64_t n) {
    double worst = 0;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
            worst = std::max(worst, std::fabs(c[i * ldc + j] - e.c[i * n + j]) / e.scale[i * n + j]);
    return worst;
}

// Restores the backend's policy and thread count when a test ends, however it ends.
struct Bf16Policy {
    ConvPolicy saved = cpu_backend().conv_policy();
    int threads = cpu_threads();
    Bf16Policy() { cpu_backend().set_conv_policy({ConvPath::OneDnn, ConvPrecision::Bf16}); }
    ~Bf16Policy() {
        cpu_backend().set_conv_policy(saved);
        set_cpu_threads(threads);
    }
};

// bf16 products are exact in fp32 (8 + 8 significant bits), so only the fp32 sums err: a few units of 2^-24 of
// the entry's scale. Rounding the operands to bf16 moves an entry by up to about 2^-8 of its scale, and an fp32
// product lands that far from the bf16 one: the bound tells the two apart.
constexpr double kSummationBound = 1e-5;

}  // namespace

TEST_CASE("bf16 gemm: every transposition equals a float64 product of the bf16-rounded operands", "[matmul][bf16]") {
    CW_SKIP_WITHOUT_BF16();
    Bf16Policy policy;
    // Sizes that are not multiples of 16 (masked tails), leading dimensions wider than the rows.
    const int64_t m = 37, n = 19, k = 300, pad = 3;
    uint64_t seed = 7;
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            INFO("trans_a " << ta << ", trans_b " << tb);
            const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
            const std::vector<float> a = uniform(size_t((ta ? k : m) * lda), seed++),
                                     b = uniform(size_t((tb ? n : k) * ldb), seed++);
            const Exact rounded = exact_product(ta, tb, m, n, k, bf16_rounded(a), lda, bf16_rounded(b), ldb);
            std::vector<std::vector<float>> results;
            for (int threads : {1, 2}) {
                set_cpu_threads(threads);
                std::vector<float> c(size_t(m * ldc), 42.f);
                cpu_backend().gemm(ta, tb, m, n, k, 1.f, a.data(), lda, b.data(), ldb, 0.f, c.data(), ldc);
                CHECK(worst_error(c, ldc, rounded, m, n) < kSummationBound);
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = n; j < ldc; ++j) REQUIRE(c[i * ldc + j] == 42.f);  // c's padding untouched
                results.push_back(c);
            }
            CHECK(results[0] == results[1]);
            // The same product in fp32 misses the bound: the test sees which precision ran.
            std::vector<float> fp32(size_t(m * ldc));
            cpu_backend().set_conv_policy({ConvPath::OneDnn, ConvPrecision::Fp32});
            cpu_backend().gemm(ta, tb, m, n, k, 1.f, a.data(), lda, b.data(), ldb, 0.f, fp32.data(), ldc);
            cpu_backend().set_conv_policy({ConvPath::OneDnn, ConvPrecision::Bf16});
            CHECK(worst_error(fp32, ldc, rounded, m, n) > 10 * kSummationBound);
        }
}

TEST_CASE("bf16 gemm: a scaled or accumulating product stays fp32", "[matmul][bf16]") {
    CW_SKIP_WITHOUT_BF16();
    Bf16Policy policy;
    const int64_t m = 9, n = 21, k = 40;
    const std::vector<float> a = uniform(size_t(m * k), 1), b = uniform(size_t(k * n), 2), c0 = uniform(size_t(m * n), 3);
    const Exact e = exact_product(false, false, m, n, k, a, k, b, n);  // the operands as they are, not rounded
    std::vector<float> c = c0;
    cpu_backend().gemm(false, false, m, n, k, 0.5f, a.data(), k, b.data(), n, 1.f, c.data(), n);
    for (int64_t i = 0; i < m * n; ++i) CHECK(std::fabs(c[i] - (0.5 * e.c[i] + c0[i])) < 1e-5 * (e.scale[i] + 1));
}

TEST_CASE("bf16 gemm: a linear layer's output and gradients in a bf16 training step", "[matmul][bf16]") {
    CW_SKIP_WITHOUT_BF16();
    const int64_t batch = 6, in = 50, out = 7;
    const std::vector<float> xs = uniform(size_t(batch * in), 11), ws = uniform(size_t(out * in), 12),
                             gys = uniform(size_t(batch * out), 13);
    Tensor x = Tensor::from_vector(xs, {batch, in}).set_requires_grad(true);
    Tensor w = Tensor::from_vector(ws, {out, in}).set_requires_grad(true);
    const ConvPrecision before = cpu_backend().conv_policy().precision;
    Tensor y;
    {
        ConvPrecisionScope step(ConvPrecision::Bf16);  // what the trainer holds around each training step
        y = linear(x, w);
        sum(mul(y, Tensor::from_vector(gys, {batch, out}))).backward();  // y's gradient is gy
    }
    const std::vector<float> xr = bf16_rounded(xs), wr = bf16_rounded(ws), gyr = bf16_rounded(gys);
    // y = x w^T, gx = gy w, gw = gy^T x
    CHECK(worst_error(y.to_vector(), out, exact_product(false, true, batch, out, in, xr, in, wr, in), batch, out) <
          kSummationBound);
    CHECK(worst_error(x.grad().to_vector(), in, exact_product(false, false, batch, in, out, gyr, out, wr, in), batch,
                      in) < kSummationBound);
    CHECK(worst_error(w.grad().to_vector(), in, exact_product(true, false, out, in, batch, gyr, out, xr, in), out,
                      in) < kSummationBound);
    CHECK(cpu_backend().conv_policy().precision == before);  // the scope ended
}
