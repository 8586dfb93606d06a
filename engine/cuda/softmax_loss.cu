// Row-wise softmax / log-softmax, softmax cross-entropy with label smoothing, and the KL divergence between the
// softmaxes of two logit rows (TRADES). One block per row (rows are samples, columns classes); row sums use the
// fixed-order block reduction in double, as the CPU sums in double (engine/cpu/softmax_loss.cpp).
// A label outside [0, cols) cannot throw from a kernel: its loss and probabilities become NaN, which the loss
// and the NaN checks surface, and no memory outside the row is touched.
#include <cmath>

#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"

namespace cw::cuda {

namespace {

constexpr int kRowThreads = 128;  // class counts are small; a power of two for block_sum

unsigned row_grid(int64_t rows) { return static_cast<unsigned>(std::min<int64_t>(rows, 65535)); }

struct RowScratch {
    double d[kRowThreads];
    float f[kRowThreads];
};

// log-sum-exp of one row: max, then sum of exp(x - max) in double.
__device__ float row_lse(const float* x, int64_t cols, RowScratch& sh) {
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) mx = fmaxf(mx, x[j]);
    mx = block_max(mx, sh.f);
    double s = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += exp(static_cast<double>(x[j] - mx));
    s = block_sum(s, sh.d);
    return mx + static_cast<float>(log(s));
}

__global__ void softmax_rows_kernel(const float* x, float* y, int64_t rows, int64_t cols, bool log_out) {
    __shared__ RowScratch sh;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* px = x + r * cols;
        float* py = y + r * cols;
        const float lse = row_lse(px, cols, sh);
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            const float lp = px[j] - lse;
            py[j] = log_out ? lp : expf(lp);
        }
    }
}

__global__ void softmax_rows_backward_kernel(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols,
                                             bool log_out) {
    __shared__ RowScratch sh;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* py = y + r * cols;
        const float* pg = gy + r * cols;
        float* po = gx + r * cols;
        double s = 0;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
            s += log_out ? static_cast<double>(pg[j]) : static_cast<double>(pg[j]) * py[j];
        const float sf = static_cast<float>(block_sum(s, sh.d));
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
            po[j] = log_out ? pg[j] - __fmul_rn(expf(py[j]), sf) : __fmul_rn(py[j], pg[j] - sf);
    }
}

// loss = -sum_j target_j * log p_j with target = (1 - smoothing) * onehot(label) + smoothing / cols.
__global__ void cross_entropy_forward_kernel(const float* logits, const int32_t* labels, float* loss, float* probs,
                                             int64_t rows, int64_t cols, float smoothing) {
    __shared__ RowScratch sh;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* px = logits + r * cols;
        float* pp = probs + r * cols;
        const int32_t label = labels[r];
        const bool valid = label >= 0 && label < cols;
        const float lse = row_lse(px, cols, sh);
        double s = 0;  // sum of log-probabilities, for the smoothing term
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            const float lp = px[j] - lse;
            s += lp;
            pp[j] = valid ? expf(lp) : NAN;
        }
        s = block_sum(s, sh.d);
        if (threadIdx.x == 0) {
            double l = NAN;
            if (valid) {
                l = -(1.0 - smoothing) * static_cast<double>(px[label] - lse);
                if (smoothing != 0.f) l -= static_cast<double>(smoothing) * s / static_cast<double>(cols);
            }
            loss[r] = static_cast<float>(l);
        }
    }
}

// glogits[r, j] = gloss[r] * (probs[r, j] - target_j); elementwise, off = smoothing / cols.
__global__ void cross_entropy_backward_kernel(const float* probs, const int32_t* labels, const float* gloss,
                                              float* glogits, int64_t cols, float smoothing, float off, int64_t n) {
    CW_GRID_STRIDE(e, n) {
        const int64_t r = e / cols, j = e % cols;
        const float target = off + (j == labels[r] ? 1.f - smoothing : 0.f);
        glogits[e] = gloss[r] * (probs[e] - target);
    }
}

__global__ void kl_div_forward_kernel(const float* p_logits, const float* q_logits, float* loss, float* log_p,
                                      float* log_q, int64_t rows, int64_t cols) {
    __shared__ RowScratch sh;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* pp = p_logits + r * cols;
        const float* pq = q_logits + r * cols;
        const float lse_p = row_lse(pp, cols, sh);
        const float lse_q = row_lse(pq, cols, sh);
        double kl = 0;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            const float lp = pp[j] - lse_p, lq = pq[j] - lse_q;
            log_p[r * cols + j] = lp;
            log_q[r * cols + j] = lq;
            kl += exp(static_cast<double>(lp)) * static_cast<double>(lp - lq);
        }
        kl = block_sum(kl, sh.d);
        if (threadIdx.x == 0) loss[r] = static_cast<float>(kl);
    }
}

// d KL / d p_logits = p * ((log p - log q) - KL);  d KL / d q_logits = q - p. gp or gq may be null.
__global__ void kl_div_backward_kernel(const float* log_p, const float* log_q, const float* gloss, float* gp,
                                       float* gq, int64_t rows, int64_t cols) {
    __shared__ RowScratch sh;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* lp = log_p + r * cols;
        const float* lq = log_q + r * cols;
        double kl = 0;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
            kl += exp(static_cast<double>(lp[j])) * static_cast<double>(lp[j] - lq[j]);
        const float klf = static_cast<float>(block_sum(kl, sh.d));
        const float g = gloss[r];
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            const float p = expf(lp[j]), q = expf(lq[j]);
            if (gp) gp[r * cols + j] = __fmul_rn(__fmul_rn(g, p), (lp[j] - lq[j]) - klf);
            if (gq) gq[r * cols + j] = g * (q - p);
        }
    }
}

}  // namespace

void CudaBackend::softmax_rows(const float* x, float* y, int64_t rows, int64_t cols, bool log) {
    if (rows <= 0 || cols <= 0) return;
    softmax_rows_kernel<<<row_grid(rows), kRowThreads, 0, stream_>>>(x, y, rows, cols, log);
    CW_LAUNCH_CHECK("softmax_rows_kernel");
}

void CudaBackend::softmax_rows_backward(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols,
                                        bool log) {
    if (rows <= 0 || cols <= 0) return;
    softmax_rows_backward_kernel<<<row_grid(rows), kRowThreads, 0, stream_>>>(y, gy, gx, rows, cols, log);
    CW_LAUNCH_CHECK("softmax_rows_backward_kernel");
}

void CudaBackend::cross_entropy_forward(const float* logits, const int32_t* labels, float* loss, float* probs,
                                        int64_t rows, int64_t cols, float smoothing) {
    if (rows <= 0) return;
    if (cols <= 0) {  // no classes: no valid label
        fill(loss, NAN, rows);
        return;
    }
    cross_entropy_forward_kernel<<<row_grid(rows), kRowThreads, 0, stream_>>>(logits, labels, loss, probs, rows,
                                                                              cols, smoothing);
    CW_LAUNCH_CHECK("cross_entropy_forward_kernel");
}

void CudaBackend::cross_entropy_backward(const float* probs, const int32_t* labels, const float* gloss,
                                         float* glogits, int64_t rows, int64_t cols, float smoothing) {
    const int64_t n = rows * cols;
    if (n <= 0) return;
    const float off = smoothing / static_cast<float>(cols);
    cross_entropy_backward_kernel<<<grid_for(n), kThreads, 0, stream_>>>(probs, labels, gloss, glogits, cols,
                                                                         smoothing, off, n);
    CW_LAUNCH_CHECK("cross_entropy_backward_kernel");
}

void CudaBackend::kl_div_forward(const float* p_logits, const float* q_logits, float* loss, float* log_p,
                                 float* log_q, int64_t rows, int64_t cols) {
    if (rows <= 0) return;
    if (cols <= 0) {
        fill(loss, 0.f, rows);
        return;
    }
    kl_div_forward_kernel<<<row_grid(rows), kRowThreads, 0, stream_>>>(p_logits, q_logits, loss, log_p, log_q, rows,
                                                                       cols);
    CW_LAUNCH_CHECK("kl_div_forward_kernel");
}

void CudaBackend::kl_div_backward(const float* log_p, const float* log_q, const float* gloss, float* gp, float* gq,
                                  int64_t rows, int64_t cols) {
    if (rows <= 0 || cols <= 0 || (!gp && !gq)) return;
    kl_div_backward_kernel<<<row_grid(rows), kRowThreads, 0, stream_>>>(log_p, log_q, gloss, gp, gq, rows, cols);
    CW_LAUNCH_CHECK("kl_div_backward_kernel");
}

}  // namespace cw::cuda
