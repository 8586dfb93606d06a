#pragma once
// The fused attack step on the GPU (PGD / FGSM with a per-sample L-inf budget, e.g. class-wise epsilons):
//
//   y[s, i] = clamp( min( max( x[s, i] + alpha[s] * sign(grad[s, i]),  x_nat[s, i] - eps[s] ),
//                         x_nat[s, i] + eps[s] ),  lo, hi )
//
// for s < n_samples, i < per_sample (tensors [n_samples, per_sample] = [N, C*H*W]), with sign(0) = 0 and
// fmin/fmax semantics (a NaN gradient sign counts as 0; a NaN operand of a min/max is ignored) — exactly the
// composition clamp(minimum(maximum(x + alpha * sign(g), x_nat - eps), x_nat + eps), lo, hi) of engine ops, so
// CPU and GPU agree bit for bit. eps and alpha are device arrays with one value per sample; y may alias x.
// One pass over memory instead of seven elementwise kernels. Queued on `stream`; does not synchronise.
#include <cuda_runtime.h>

#include <cstdint>

namespace cw::cuda {

void attack_update(const float* x, const float* grad, const float* x_nat, const float* eps, const float* alpha,
                   float* y, int64_t n_samples, int64_t per_sample, float lo, float hi, cudaStream_t stream);

}  // namespace cw::cuda
