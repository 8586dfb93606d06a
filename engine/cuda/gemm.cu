// GEMM through cuBLAS. The interface is row-major; cuBLAS is column-major, and a row-major matrix read as
// column-major is its transpose. So C = op(A) op(B) (row-major, M x N) is computed as
// C^T = op(B)^T op(A)^T (column-major, N x M): cuBLAS's "A" is our b, its "B" is our a, m and n swap, and each
// operand keeps its own transpose flag and leading dimension.
#include <climits>
#include <string>

#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"
#include "engine/cuda/index_math.h"
#include "engine/error.h"

namespace cw::cuda {

namespace {
// k == 0: C = beta * C, with beta == 0 writing zeros without reading C (it may be uninitialised), as on the CPU.
__global__ void scale_matrix_kernel(float* c, int64_t m, int64_t n, int64_t ldc, float beta) {
    CW_GRID_STRIDE(e, m * n) {
        const int64_t i = e / n, j = e % n;
        float* p = c + i * ldc + j;
        *p = beta == 0.f ? 0.f : beta * *p;
    }
}

int as_int(int64_t v, const char* what) {
    if (v < 0 || v > INT_MAX)
        throw DeviceError(std::string("gemm: ") + what + " = " + std::to_string(v) + " exceeds cuBLAS's 32-bit range");
    return static_cast<int>(v);
}
}  // namespace

void CudaBackend::gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                       int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        scale_matrix_kernel<<<grid_for(m * n), kThreads, 0, stream_>>>(c, m, n, ldc, beta);
        CW_LAUNCH_CHECK("scale_matrix_kernel");
        return;
    }
    // TF32 tensor cores (10-bit mantissa inputs, fp32 accumulation) unless switched off; the math mode is a
    // handle attribute, set on every call so that the switch takes effect at once.
    CW_CUBLAS_CHECK(cublasSetMathMode(cublas_, tf32_enabled() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    const ColumnMajorGemm cm = column_major_gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb);
    CW_CUBLAS_CHECK(cublasSgemm(cublas_, cm.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N,
                                cm.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N, as_int(cm.m, "n"), as_int(cm.n, "m"),
                                as_int(cm.k, "k"), &alpha, cm.first, as_int(cm.ld_first, "ldb"), cm.second,
                                as_int(cm.ld_second, "lda"), &beta, c, as_int(ldc, "ldc")));
}

}  // namespace cw::cuda
