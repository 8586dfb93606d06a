// Matrix products in bf16 (`--precision bf16`): the CPU backend's GEMM under the bf16 policy, for the linear layers
// and matmul. oneDNN's matmul primitive multiplies bf16 inputs and sums the products in fp32, the counterpart of
// the bf16 convolutions (engine/cpu/onednn_conv.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cw::onednn_matmul {

// c = op(a) op(b), row-major as cblas_sgemm takes them (op transposes where asked; c is m x n with leading
// dimension ldc, a is m x k or k x m with lda, b is k x n or n x k with ldb). a and b are rounded to bf16 (to
// nearest, ties to even, as VCVTNEPS2BF16 does) into buffers of this thread's; they are never modified. Requires
// AVX512_BF16 (onednn_conv::cpu_has_bf16()), which the bf16 policy guarantees.
void multiply_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float* c, int64_t ldc);

// Built primitives held by the cache (one per shape, transposition, leading dimension of c and thread count).
size_t cached_plans();

}  // namespace cw::onednn_matmul
