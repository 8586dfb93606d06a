// Row-wise softmax / log-softmax, softmax cross-entropy with label smoothing, and KL divergence between the
// softmaxes of two logit rows (TRADES). Rows are samples; they run in parallel.
#include <algorithm>
#include <cmath>

#include "engine/cpu/cpu_backend.h"

namespace cw {

namespace {
// log-softmax of one row into out; returns log-sum-exp.
float log_softmax_row(const float* x, float* out, int64_t cols) {
    float mx = x[0];
    for (int64_t j = 1; j < cols; ++j) mx = std::max(mx, x[j]);
    double s = 0;
    for (int64_t j = 0; j < cols; ++j) s += std::exp(static_cast<double>(x[j] - mx));
    const float lse = mx + static_cast<float>(std::log(s));
    for (int64_t j = 0; j < cols; ++j) out[j] = x[j] - lse;
    return lse;
}
}  // namespace

void CpuBackend::softmax_rows(const float* x, float* y, int64_t rows, int64_t cols, bool log) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
        log_softmax_row(x + r * cols, y + r * cols, cols);
        if (!log)
            for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = std::exp(y[r * cols + j]);
    }
}

void CpuBackend::softmax_rows_backward(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols,
                                       bool log) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
        const float* py = y + r * cols;
        const float* pg = gy + r * cols;
        float* po = gx + r * cols;
        double s = 0;
        if (log) {
            for (int64_t j = 0; j < cols; ++j) s += pg[j];
            for (int64_t j = 0; j < cols; ++j) po[j] = pg[j] - std::exp(py[j]) * static_cast<float>(s);
        } else {
            for (int64_t j = 0; j < cols; ++j) s += static_cast<double>(pg[j]) * py[j];
            for (int64_t j = 0; j < cols; ++j) po[j] = py[j] * (pg[j] - static_cast<float>(s));
        }
    }
}

void CpuBackend::cross_entropy_forward(const float* logits, const int32_t* labels, float* loss, float* probs,
                                       int64_t rows, int64_t cols, float smoothing) {
    // target = (1 - smoothing) * onehot(y) + smoothing / C;  loss = -sum target * log p
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
        float* lp = probs + r * cols;
        log_softmax_row(logits + r * cols, lp, cols);
        double l = -(1.0 - smoothing) * lp[labels[r]];
        if (smoothing != 0.f) {
            double s = 0;
            for (int64_t j = 0; j < cols; ++j) s += lp[j];
            l -= smoothing * s / static_cast<double>(cols);
        }
        loss[r] = static_cast<float>(l);
        for (int64_t j = 0; j < cols; ++j) lp[j] = std::exp(lp[j]);
    }
}

void CpuBackend::cross_entropy_backward(const float* probs, const int32_t* labels, const float* gloss,
                                        float* glogits, int64_t rows, int64_t cols, float smoothing) {
    const float off = smoothing / static_cast<float>(cols);
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
        const float g = gloss[r];
        for (int64_t j = 0; j < cols; ++j) {
            const float target = off + (j == labels[r] ? 1.f - smoothing : 0.f);
            glogits[r * cols + j] = g * (probs[r * cols + j] - target);
        }
    }
}

void CpuBackend::kl_div_forward(const float* p_logits, const float* q_logits, float* loss, float* log_p,
                                float* log_q, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
        float* lp = log_p + r * cols;
        float* lq = log_q + r * cols;
        log_softmax_row(p_logits + r * cols, lp, cols);
        log_softmax_row(q_logits + r * cols, lq, cols);
        double kl = 0;
        for (int64_t j = 0; j < cols; ++j) kl += std::exp(static_cast<double>(lp[j])) * (lp[j] - lq[j]);
        loss[r] = static_cast<float>(kl);
    }
}

void CpuBackend::kl_div_backward(const float* log_p, const float* log_q, const float* gloss, float* gp, float* gq,
                                 int64_t rows, int64_t cols) {
    // d KL / d p_logits = p * ((log p - log q) - KL);  d KL / d q_logits = q - p
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
        const float* lp = log_p + r * cols;
        const float* lq = log_q + r * cols;
        const float g = gloss[r];
        double kl = 0;
        for (int64_t j = 0; j < cols; ++j) kl += std::exp(static_cast<double>(lp[j])) * (lp[j] - lq[j]);
        for (int64_t j = 0; j < cols; ++j) {
            const float p = std::exp(lp[j]), q = std::exp(lq[j]);
            if (gp) gp[r * cols + j] = g * p * (lp[j] - lq[j] - static_cast<float>(kl));
            if (gq) gq[r * cols + j] = g * (q - p);
        }
    }
}

}  // namespace cw
