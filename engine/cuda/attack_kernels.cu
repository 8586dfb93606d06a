// The attack kernels of the CUDA backend: per-row objectives and the projected step evaluate the functions of
// engine/attack_math.h, exactly as the CPU backend does (engine/cpu/attack_kernels.cpp), and row copies for
// sample subsets. L2 norms are summed per sample by one block in a fixed order (deterministic, no atomics).
#include "engine/attack_math.h"
#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"

namespace cw::cuda {

namespace {

// One thread per row: rows are few (a batch) and short (the classes).
__global__ void attack_objective_kernel(AttackObjective kind, const float* logits, const int32_t* labels,
                                        const int32_t* targets, float kappa, float* value, float* dz, float* wrong,
                                        float* on_target, int64_t rows, int64_t cols) {
    CW_GRID_STRIDE(i, rows)
        attack_math::objective_row(kind, logits + i * cols, cols, labels[i], targets ? targets[i] : -1, kappa,
                                   value + i, dz ? dz + i * cols : nullptr, wrong + i, on_target + i);
}

__global__ void linf_step_kernel(float* x_adv, const float* grad, const float* x_nat, const float* eps,
                                 const float* alpha, int64_t dim, int64_t total) {
    CW_GRID_STRIDE(j, total) {
        const int64_t i = j / dim;
        x_adv[j] = attack_math::linf_step(x_adv[j], grad ? grad[j] : 0.f, x_nat[j], eps[i], alpha[i], grad != nullptr);
    }
}

// One block per sample: step scale from ||g||, step, ball scale from ||a − x_nat||, projection.
__global__ void l2_step_kernel(float* x_adv, const float* grad, const float* x_nat, const float* eps,
                               const float* alpha, int64_t n, int64_t dim) {
    __shared__ double scratch[kThreads];
    for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
        float* a = x_adv + i * dim;
        const float* c = x_nat + i * dim;
        if (grad) {
            const float* g = grad + i * dim;
            double gg = 0;
            for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) gg += double(g[j]) * g[j];
            const float step = attack_math::l2_step_scale(alpha[i], block_sum(gg, scratch));
            for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) a[j] = attack_math::l2_stepped(a[j], g[j], step, true);
        }
        double dd = 0;
        for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
            const double d = a[j] - c[j];
            dd += d * d;
        }
        const float ball = attack_math::l2_ball_scale(eps[i], block_sum(dd, scratch));
        for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) a[j] = attack_math::l2_project(a[j], c[j], ball);
    }
}

__global__ void copy_rows_kernel(const float* src, const int32_t* src_rows, float* dst, const int32_t* dst_rows,
                                 int64_t row_len, int64_t total) {
    CW_GRID_STRIDE(j, total) {
        const int64_t k = j / row_len, e = j % row_len;
        const int64_t s = src_rows ? src_rows[k] : k, d = dst_rows ? dst_rows[k] : k;
        dst[d * row_len + e] = src[s * row_len + e];
    }
}

__global__ void where_rows_kernel(const float* mask, const float* a, const float* b, float* y, int64_t row_len,
                                  int64_t total) {
    CW_GRID_STRIDE(j, total) y[j] = mask[j / row_len] != 0.f ? a[j] : b[j];
}

// One thread per window value: (k, ch, row, col) over n × c × side × side.
__global__ void square_window_kernel(float* x_adv, const float* x_nat, const int32_t* rows, const float* eps, int64_t c,
                                     int64_t h, int64_t w, int64_t top, int64_t left, int64_t side,
                                     uint32_t negative_channels, int64_t total) {
    const int64_t dim = c * h * w, area = side * side;
    CW_GRID_STRIDE(t, total) {
        const int64_t k = t / (c * area), ch = (t / area) % c, row = top + (t % area) / side, col = left + t % side;
        const int64_t j = (ch * h + row) * w + col;
        const float sigma = (negative_channels >> ch) & 1u ? -1.f : 1.f;
        const int64_t r = rows[k];
        x_adv[k * dim + j] = attack_math::square_window_value(x_adv[k * dim + j], x_nat[r * dim + j], eps[r], sigma);
    }
}

}  // namespace

void CudaBackend::square_window(float* x_adv, const float* x_nat, const int32_t* rows, const float* eps, int64_t n,
                                int64_t c, int64_t h, int64_t w, int64_t top, int64_t left, int64_t side,
                                uint32_t negative_channels) {
    const int64_t total = n * c * side * side;
    if (total <= 0) return;
    square_window_kernel<<<grid_for(total), kThreads, 0, stream_>>>(x_adv, x_nat, rows, eps, c, h, w, top, left, side,
                                                                     negative_channels, total);
    CW_LAUNCH_CHECK("square_window_kernel");
}

void CudaBackend::attack_objective(AttackObjective kind, const float* logits, const int32_t* labels,
                                   const int32_t* targets, float kappa, float* value, float* dz, float* wrong,
                                   float* on_target, int64_t rows, int64_t cols) {
    if (rows <= 0) return;
    attack_objective_kernel<<<grid_for(rows), kThreads, 0, stream_>>>(kind, logits, labels, targets, kappa, value, dz,
                                                                       wrong, on_target, rows, cols);
    CW_LAUNCH_CHECK("attack_objective_kernel");
}

void CudaBackend::attack_step(AttackNorm norm, float* x_adv, const float* grad, const float* x_nat, const float* eps,
                              const float* alpha, int64_t n, int64_t dim) {
    if (n <= 0 || dim <= 0) return;
    if (norm == AttackNorm::Linf) {
        linf_step_kernel<<<grid_for(n * dim), kThreads, 0, stream_>>>(x_adv, grad, x_nat, eps, alpha, dim, n * dim);
        CW_LAUNCH_CHECK("linf_step_kernel");
    } else {
        const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(n, kMaxBlocks));
        l2_step_kernel<<<blocks, kThreads, 0, stream_>>>(x_adv, grad, x_nat, eps, alpha, n, dim);
        CW_LAUNCH_CHECK("l2_step_kernel");
    }
}

void CudaBackend::copy_rows(const float* src, const int32_t* src_rows, float* dst, const int32_t* dst_rows,
                            int64_t count, int64_t row_len) {
    if (count <= 0 || row_len <= 0) return;
    copy_rows_kernel<<<grid_for(count * row_len), kThreads, 0, stream_>>>(src, src_rows, dst, dst_rows, row_len,
                                                                         count * row_len);
    CW_LAUNCH_CHECK("copy_rows_kernel");
}

void CudaBackend::where_rows(const float* mask, const float* a, const float* b, float* y, int64_t n, int64_t row_len) {
    if (n <= 0 || row_len <= 0) return;
    where_rows_kernel<<<grid_for(n * row_len), kThreads, 0, stream_>>>(mask, a, b, y, row_len, n * row_len);
    CW_LAUNCH_CHECK("where_rows_kernel");
}

}  // namespace cw::cuda
