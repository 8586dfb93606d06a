// Fused optimiser updates (one pass over each parameter, torch.optim's rules as in engine/cpu/optim_kernels.cpp),
// the weight average lerp_ (EMA / SWA).
#include <cmath>

#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"

namespace cw::cuda {

namespace {

__global__ void sgd_kernel(float* w, const float* g, float* buf, int64_t n, float lr, float momentum, float dampening,
                           float weight_decay, bool nesterov, bool first_step) {
    CW_GRID_STRIDE(i, n) {
        float d = g[i] + weight_decay * w[i];
        if (momentum != 0.f) {
            // torch: the first step initialises the buffer with the gradient itself (no dampening)
            const float b = first_step ? d : momentum * buf[i] + (1.f - dampening) * d;
            buf[i] = b;
            d = nesterov ? d + momentum * b : b;
        }
        w[i] -= lr * d;
    }
}

// step_size = lr / (1 - beta1^t) and inv_sqrt_bc2 = 1 / sqrt(1 - beta2^t) come from the host, computed exactly as
// the CPU computes them.
__global__ void adam_kernel(float* w, const float* g, float* m, float* v, int64_t n, float lr, float beta1,
                            float beta2, float eps, float weight_decay, bool decoupled, float step_size,
                            float inv_sqrt_bc2) {
    CW_GRID_STRIDE(i, n) {
        float gi = g[i];
        float wi = w[i];
        if (decoupled)
            wi *= 1.f - lr * weight_decay;  // AdamW
        else
            gi += weight_decay * wi;  // Adam's L2 penalty
        const float mi = beta1 * m[i] + (1.f - beta1) * gi;
        const float vi = beta2 * v[i] + (1.f - beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        w[i] = wi - step_size * mi / (sqrtf(vi) * inv_sqrt_bc2 + eps);
    }
}

__global__ void lerp_kernel(float* avg, const float* x, int64_t n, float decay) {
    CW_GRID_STRIDE(i, n) avg[i] = decay * avg[i] + (1.f - decay) * x[i];
}

}  // namespace

void CudaBackend::sgd_step(float* w, const float* g, float* momentum_buf, int64_t n, float lr, float momentum,
                           float dampening, float weight_decay, bool nesterov, bool first_step) {
    if (n <= 0) return;
    sgd_kernel<<<grid_for(n), kThreads, 0, stream_>>>(w, g, momentum_buf, n, lr, momentum, dampening, weight_decay,
                                                      nesterov, first_step);
    CW_LAUNCH_CHECK("sgd_kernel");
}

void CudaBackend::adam_step(float* w, const float* g, float* m, float* v, int64_t n, float lr, float beta1, float beta2,
                            float eps, float weight_decay, bool decoupled, int64_t step) {
    if (n <= 0) return;
    const float bc1 = 1.f - std::pow(beta1, static_cast<float>(step));
    const float bc2 = 1.f - std::pow(beta2, static_cast<float>(step));
    const float step_size = lr / bc1, inv_sqrt_bc2 = 1.f / std::sqrt(bc2);
    adam_kernel<<<grid_for(n), kThreads, 0, stream_>>>(w, g, m, v, n, lr, beta1, beta2, eps, weight_decay, decoupled,
                                                       step_size, inv_sqrt_bc2);
    CW_LAUNCH_CHECK("adam_kernel");
}

void CudaBackend::lerp_(float* avg, const float* x, int64_t n, float decay) {
    if (n <= 0) return;
    lerp_kernel<<<grid_for(n), kThreads, 0, stream_>>>(avg, x, n, decay);
    CW_LAUNCH_CHECK("lerp_kernel");
}

}  // namespace cw::cuda
