// Fused optimiser updates (one pass over each parameter), following torch.optim's update rules exactly.
#include <cmath>

#include "engine/cpu/cpu_backend.h"

namespace cw {

void CpuBackend::sgd_step(float* w, const float* g, float* buf, int64_t n, float lr, float momentum, float dampening,
                          float weight_decay, bool nesterov, bool first_step) {
#pragma omp parallel for schedule(static) if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
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

void CpuBackend::adam_step(float* w, const float* g, float* m, float* v, int64_t n, float lr, float beta1, float beta2,
                           float eps, float weight_decay, bool decoupled, int64_t step) {
    const float bc1 = 1.f - std::pow(beta1, static_cast<float>(step));
    const float bc2 = 1.f - std::pow(beta2, static_cast<float>(step));
    const float step_size = lr / bc1, inv_sqrt_bc2 = 1.f / std::sqrt(bc2);
#pragma omp parallel for schedule(static) if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
        float gi = g[i];
        if (decoupled) w[i] *= 1.f - lr * weight_decay;  // AdamW
        else gi += weight_decay * w[i];                   // Adam's L2 penalty
        m[i] = beta1 * m[i] + (1.f - beta1) * gi;
        v[i] = beta2 * v[i] + (1.f - beta2) * gi * gi;
        w[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_bc2 + eps);
    }
}

void CpuBackend::lerp_(float* avg, const float* x, int64_t n, float decay) {
#pragma omp parallel for schedule(static) if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) avg[i] = decay * avg[i] + (1.f - decay) * x[i];
}

}  // namespace cw
