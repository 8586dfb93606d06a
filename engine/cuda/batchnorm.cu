// Per-channel kernels over an [outer = N, dim = C, inner = HW] view: batch norm (train / eval, forward /
// backward), and the channel bias helpers of conv and linear layers (add_channel_bias, channel_sum).
//
// Channel statistics use a two-stage fixed-order reduction: block (c, s) sums split s of channel c (a contiguous
// range of samples) into a double partial, then one thread per channel adds its partials in order. The split
// count depends on the shape only, so results are bit-identical run after run. Formulas and rounding follow
// engine/cpu/batchnorm.cpp (two-pass variance, unbiased running variance, statistics in double); __fmul_rn and
// __fadd_rn keep nvcc from fusing the products the CPU rounds separately. With `relu` (batch_norm_relu) the forward
// clamps in the same pass and the backward gates gy by recomputing y from x with the forward's arithmetic.
#include "engine/batchnorm_math.h"
#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"
#include "engine/cuda/index_math.h"

namespace cw::cuda {

namespace {

constexpr int64_t kChannelBlocks = 1024;  // enough blocks to fill a large GPU
constexpr int64_t kMinSplitElems = 4096;  // but at least this many elements per block
constexpr int64_t kMaxSplits = 64;

int64_t channel_splits(AxisView v) {
    int64_t s = ceil_div(kChannelBlocks, std::max<int64_t>(v.dim, 1));
    s = std::min(s, v.outer * v.inner / kMinSplitElems);
    s = std::min(s, v.outer);
    s = std::min(s, kMaxSplits);
    return std::max<int64_t>(s, 1);
}

// ---- stage 1: per-(channel, split) partial sums of NV quantities, loaded by a functor ----------------------------
template <int NV, class Load>
__global__ void channel_partial_kernel(AxisView v, int64_t splits, Load load, double* partial, bool narrow) {
    __shared__ double scratch[kThreads];
    const int64_t c = blockIdx.x, s = blockIdx.y;
    int64_t n0, n1;
    split_range(s, splits, v.outer, n0, n1);
    const int64_t count = (n1 - n0) * v.inner;
    double acc[NV];
    for (int q = 0; q < NV; ++q) acc[q] = 0;
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
        int64_t dn, i;
        divmod(j, v.inner, narrow, dn, i);
        load(((n0 + dn) * v.dim + c) * v.inner + i, c, acc);
    }
    for (int q = 0; q < NV; ++q) {
        const double t = block_sum(acc[q], scratch);
        if (threadIdx.x == 0) partial[(c * splits + s) * NV + q] = t;
    }
}

template <int NV, class Load>
void channel_partials(CudaBackend& be, AxisView v, int64_t splits, const Load& load, double* partial) {
    const dim3 grid(static_cast<unsigned>(v.dim), static_cast<unsigned>(splits));
    const bool narrow = fits_32bit(v.outer * v.dim * v.inner);
    channel_partial_kernel<NV, Load><<<grid, kThreads, 0, be.stream()>>>(v, splits, load, partial, narrow);
    CW_LAUNCH_CHECK("channel_partial_kernel");
}

// Sum of the splits of channel c, quantity q, in split order.
__device__ inline double split_total(const double* partial, int64_t c, int64_t splits, int nv, int q) {
    double t = 0;
    for (int64_t s = 0; s < splits; ++s) t += partial[(c * splits + s) * nv + q];
    return t;
}

// The affine map and the fused ReLU's gate are engine/batchnorm_math.h's, the CPU kernels' own: the backward
// recomputes y with the forward's rounding, so it clamps exactly where the forward did (and where the CPU does).
__device__ inline float param_or(const float* p, int64_t c, float fallback) { return p ? p[c] : fallback; }

__device__ inline bn::ChannelAffine affine_of(const float* mean, float invstd, const float* gamma, const float* beta,
                                              int64_t c) {
    return bn::channel_affine(mean[c], invstd, param_or(gamma, c, 1.f), param_or(beta, c, 0.f));
}

__device__ inline float gate(float g, float x, const bn::ChannelAffine& a, bool relu) {
    return relu ? bn::gated(g, x, a) : g;
}

struct SumLoad {
    const float* x;
    __device__ void operator()(int64_t off, int64_t, double* acc) const { acc[0] += x[off]; }
};

struct SquaredDeviationLoad {  // (x - mean)^2 with the mean rounded to float, as the CPU's second pass
    const float* x;
    const double* mean;
    __device__ void operator()(int64_t off, int64_t c, double* acc) const {
        const float d = x[off] - static_cast<float>(mean[c]);
        acc[0] += __fmul_rn(d, d);
    }
};

struct TrainGradLoad {  // sum g, sum g * (x - mean), g the gated gy
    const float* x;
    const float* gy;
    const float* mean;
    const float* invstd;
    const float* gamma;
    const float* beta;
    bool relu;
    __device__ void operator()(int64_t off, int64_t c, double* acc) const {
        const float g = gate(gy[off], x[off], affine_of(mean, invstd[c], gamma, beta, c), relu);
        acc[0] += g;
        acc[1] += __fmul_rn(g, x[off] - mean[c]);
    }
};

__device__ inline float eval_invstd(const float* running_var, int64_t c, float eps) {
    return 1.f / sqrtf(running_var[c] + eps);  // IEEE sqrt and division (no fast math), as std::sqrt on the CPU
}

struct EvalGradLoad {  // sum g, sum g * (x - mean) * invstd with the running statistics, g the gated gy
    const float* x;
    const float* gy;
    const float* mean;
    const float* var;
    const float* gamma;
    const float* beta;
    float eps;
    bool relu;
    __device__ void operator()(int64_t off, int64_t c, double* acc) const {
        const float g = gate(gy[off], x[off], affine_of(mean, eval_invstd(var, c, eps), gamma, beta, c), relu);
        acc[0] += g;
        acc[1] += __fmul_rn(__fmul_rn(g, x[off] - mean[c]), eval_invstd(var, c, eps));
    }
};

// ---- stage 2 and the elementwise passes ---------------------------------------------------------------------------
__global__ void bn_mean_kernel(const double* partial, int64_t splits, int64_t channels, double m, double* mean) {
    CW_GRID_STRIDE(c, channels) mean[c] = split_total(partial, c, splits, 1, 0) / m;
}

// Variance, saved statistics, running statistics (PyTorch: unbiased variance), and the affine map y = x*a + b.
__global__ void bn_finalize_kernel(const double* partial, int64_t splits, int64_t channels, int64_t m,
                                   const double* mean, const float* gamma, const float* beta, float* save_mean,
                                   float* save_invstd, float* running_mean, float* running_var, float momentum,
                                   float eps, float* affine) {
    CW_GRID_STRIDE(c, channels) {
        const double mu = mean[c];
        const double var = split_total(partial, c, splits, 1, 0) / static_cast<double>(m);
        const float invstd = static_cast<float>(1.0 / sqrt(var + static_cast<double>(eps)));
        save_mean[c] = static_cast<float>(mu);
        save_invstd[c] = invstd;
        if (running_mean) {
            const double unbiased = m > 1 ? var * static_cast<double>(m) / static_cast<double>(m - 1) : var;
            // The CPU evaluates (1 - momentum) * running in float, momentum * statistic in double.
            const float keep_mean = __fmul_rn(1.f - momentum, running_mean[c]);
            const float keep_var = __fmul_rn(1.f - momentum, running_var[c]);
            running_mean[c] = static_cast<float>(__dadd_rn(keep_mean, __dmul_rn(momentum, mu)));
            running_var[c] = static_cast<float>(__dadd_rn(keep_var, __dmul_rn(momentum, unbiased)));
        }
        const bn::ChannelAffine a =
            bn::channel_affine(static_cast<float>(mu), invstd, param_or(gamma, c, 1.f), param_or(beta, c, 0.f));
        affine[2 * c] = a.scale;
        affine[2 * c + 1] = a.shift;
    }
}

__global__ void bn_apply_affine_kernel(const float* x, float* y, const float* affine, AxisView v, int64_t n,
                                       bool narrow, bool relu) {
    CW_GRID_STRIDE(j, n) {
        const int64_t c = channel_of(j, v.inner, v.dim, narrow);
        const float t = bn::affine_at(bn::ChannelAffine{affine[2 * c], affine[2 * c + 1]}, x[j]);
        y[j] = relu ? bn::relu_at(t) : t;
    }
}

__global__ void bn_eval_forward_kernel(const float* x, const float* gamma, const float* beta, float* y,
                                       const float* mean, const float* var, AxisView v, float eps, int64_t n,
                                       bool narrow, bool relu) {
    CW_GRID_STRIDE(j, n) {
        const int64_t c = channel_of(j, v.inner, v.dim, narrow);
        const float t = bn::affine_at(affine_of(mean, eval_invstd(var, c, eps), gamma, beta, c), x[j]);
        y[j] = relu ? bn::relu_at(t) : t;
    }
}

// ggamma, gbeta and the three coefficients of gx = k * (gy - mean_gy - xhat * mean_gy_xhat).
__global__ void bn_backward_finalize_kernel(const double* partial, int64_t splits, int64_t channels, double m,
                                            const float* gamma, const float* save_invstd, float* ggamma,
                                            float* gbeta, float* coef) {
    CW_GRID_STRIDE(c, channels) {
        const double sum_gy = split_total(partial, c, splits, 2, 0);
        const double sum_gy_xhat = split_total(partial, c, splits, 2, 1) * save_invstd[c];
        if (ggamma) ggamma[c] = static_cast<float>(sum_gy_xhat);
        if (gbeta) gbeta[c] = static_cast<float>(sum_gy);
        if (coef) {
            coef[3 * c] = __fmul_rn(gamma ? gamma[c] : 1.f, save_invstd[c]);
            coef[3 * c + 1] = static_cast<float>(sum_gy / m);
            coef[3 * c + 2] = static_cast<float>(sum_gy_xhat / m);
        }
    }
}

__global__ void bn_backward_input_kernel(const float* x, const float* gamma, const float* beta, const float* gy,
                                         const float* save_mean, const float* save_invstd, const float* coef,
                                         float* gx, AxisView v, int64_t n, bool narrow, bool relu) {
    CW_GRID_STRIDE(j, n) {
        const int64_t c = channel_of(j, v.inner, v.dim, narrow);
        const float g = gate(gy[j], x[j], affine_of(save_mean, save_invstd[c], gamma, beta, c), relu);
        const float xhat = __fmul_rn(x[j] - save_mean[c], save_invstd[c]);
        gx[j] = __fmul_rn(coef[3 * c], (g - coef[3 * c + 1]) - __fmul_rn(xhat, coef[3 * c + 2]));
    }
}

__global__ void bn_eval_sums_kernel(const double* partial, int64_t splits, int64_t channels, float* ggamma,
                                    float* gbeta) {
    CW_GRID_STRIDE(c, channels) {
        if (ggamma) ggamma[c] = static_cast<float>(split_total(partial, c, splits, 2, 1));
        if (gbeta) gbeta[c] = static_cast<float>(split_total(partial, c, splits, 2, 0));
    }
}

__global__ void bn_eval_backward_input_kernel(const float* x, const float* gamma, const float* beta, const float* gy,
                                              const float* mean, const float* var, float* gx, AxisView v, float eps,
                                              int64_t n, bool narrow, bool relu) {
    CW_GRID_STRIDE(j, n) {
        const int64_t c = channel_of(j, v.inner, v.dim, narrow);
        const float invstd = eval_invstd(var, c, eps);
        const float g = gate(gy[j], x[j], affine_of(mean, invstd, gamma, beta, c), relu);
        gx[j] = __fmul_rn(g, __fmul_rn(param_or(gamma, c, 1.f), invstd));
    }
}

__global__ void add_channel_bias_kernel(float* y, const float* bias, AxisView v, int64_t n, bool narrow) {
    CW_GRID_STRIDE(j, n) y[j] += bias[channel_of(j, v.inner, v.dim, narrow)];
}

__global__ void channel_sum_finalize_kernel(const double* partial, int64_t splits, int64_t channels, float* out,
                                            bool accumulate) {
    CW_GRID_STRIDE(c, channels) {
        const double s = split_total(partial, c, splits, 1, 0);
        out[c] = static_cast<float>(accumulate ? out[c] + s : s);
    }
}

}  // namespace

void CudaBackend::batchnorm_forward_train(const float* x, const float* gamma, const float* beta, float* y,
                                          float* save_mean, float* save_invstd, float* running_mean,
                                          float* running_var, AxisView v, float momentum, float eps, bool relu) {
    const int64_t m = v.outer * v.inner, n = m * v.dim;
    if (v.dim <= 0 || m <= 0) return;  // the op rejects training with fewer than two values per channel
    const int64_t splits = channel_splits(v);
    Scratch partial(*this, static_cast<size_t>(v.dim * splits) * sizeof(double));
    Scratch mean(*this, static_cast<size_t>(v.dim) * sizeof(double));
    Scratch affine(*this, static_cast<size_t>(2 * v.dim) * sizeof(float));
    const unsigned cgrid = grid_for(v.dim);

    channel_partials<1>(*this, v, splits, SumLoad{x}, partial.as<double>());
    bn_mean_kernel<<<cgrid, kThreads, 0, stream_>>>(partial.as<double>(), splits, v.dim, static_cast<double>(m),
                                                    mean.as<double>());
    CW_LAUNCH_CHECK("bn_mean_kernel");
    channel_partials<1>(*this, v, splits, SquaredDeviationLoad{x, mean.as<double>()}, partial.as<double>());
    bn_finalize_kernel<<<cgrid, kThreads, 0, stream_>>>(partial.as<double>(), splits, v.dim, m, mean.as<double>(),
                                                        gamma, beta, save_mean, save_invstd, running_mean,
                                                        running_var, momentum, eps, affine.as<float>());
    CW_LAUNCH_CHECK("bn_finalize_kernel");
    bn_apply_affine_kernel<<<grid_for(n), kThreads, 0, stream_>>>(x, y, affine.as<float>(), v, n, fits_32bit(n),
                                                                 relu);
    CW_LAUNCH_CHECK("bn_apply_affine_kernel");
}

void CudaBackend::batchnorm_forward_eval(const float* x, const float* gamma, const float* beta, float* y,
                                         const float* running_mean, const float* running_var, AxisView v,
                                         float eps, bool relu) {
    const int64_t n = v.outer * v.dim * v.inner;
    if (n <= 0) return;
    bn_eval_forward_kernel<<<grid_for(n), kThreads, 0, stream_>>>(x, gamma, beta, y, running_mean, running_var, v,
                                                                  eps, n, fits_32bit(n), relu);
    CW_LAUNCH_CHECK("bn_eval_forward_kernel");
}

void CudaBackend::batchnorm_backward_train(const float* x, const float* gamma, const float* beta, const float* gy,
                                           const float* save_mean, const float* save_invstd, float* gx,
                                           float* ggamma, float* gbeta, AxisView v, bool relu) {
    const int64_t m = v.outer * v.inner, n = m * v.dim;
    if (v.dim <= 0 || m <= 0 || (!gx && !ggamma && !gbeta)) return;
    const int64_t splits = channel_splits(v);
    Scratch partial(*this, static_cast<size_t>(2 * v.dim * splits) * sizeof(double));
    Scratch coef(*this, static_cast<size_t>(3 * v.dim) * sizeof(float));
    channel_partials<2>(*this, v, splits, TrainGradLoad{x, gy, save_mean, save_invstd, gamma, beta, relu},
                        partial.as<double>());
    bn_backward_finalize_kernel<<<grid_for(v.dim), kThreads, 0, stream_>>>(
        partial.as<double>(), splits, v.dim, static_cast<double>(m), gamma, save_invstd, ggamma, gbeta,
        gx ? coef.as<float>() : nullptr);
    CW_LAUNCH_CHECK("bn_backward_finalize_kernel");
    if (!gx) return;
    bn_backward_input_kernel<<<grid_for(n), kThreads, 0, stream_>>>(
        x, gamma, beta, gy, save_mean, save_invstd, coef.as<float>(), gx, v, n, fits_32bit(n), relu);
    CW_LAUNCH_CHECK("bn_backward_input_kernel");
}

void CudaBackend::batchnorm_backward_eval(const float* x, const float* gamma, const float* beta, const float* gy,
                                          const float* running_mean, const float* running_var, float* gx,
                                          float* ggamma, float* gbeta, AxisView v, float eps, bool relu) {
    const int64_t n = v.outer * v.dim * v.inner;
    if (v.dim <= 0) return;
    if (ggamma || gbeta) {
        if (v.outer * v.inner <= 0) {  // no values: zero sums
            if (ggamma) fill(ggamma, 0.f, v.dim);
            if (gbeta) fill(gbeta, 0.f, v.dim);
        } else {
            const int64_t splits = channel_splits(v);
            Scratch partial(*this, static_cast<size_t>(2 * v.dim * splits) * sizeof(double));
            channel_partials<2>(*this, v, splits,
                                EvalGradLoad{x, gy, running_mean, running_var, gamma, beta, eps, relu},
                                partial.as<double>());
            bn_eval_sums_kernel<<<grid_for(v.dim), kThreads, 0, stream_>>>(partial.as<double>(), splits, v.dim,
                                                                           ggamma, gbeta);
            CW_LAUNCH_CHECK("bn_eval_sums_kernel");
        }
    }
    if (gx && n > 0) {
        bn_eval_backward_input_kernel<<<grid_for(n), kThreads, 0, stream_>>>(
            x, gamma, beta, gy, running_mean, running_var, gx, v, eps, n, fits_32bit(n), relu);
        CW_LAUNCH_CHECK("bn_eval_backward_input_kernel");
    }
}

void CudaBackend::add_channel_bias(float* y, const float* bias, AxisView v) {
    const int64_t n = v.outer * v.dim * v.inner;
    if (n <= 0) return;
    add_channel_bias_kernel<<<grid_for(n), kThreads, 0, stream_>>>(y, bias, v, n, fits_32bit(n));
    CW_LAUNCH_CHECK("add_channel_bias_kernel");
}

void CudaBackend::channel_sum(const float* gy, float* gbias, AxisView v, bool accumulate) {
    if (v.dim <= 0) return;
    if (v.outer * v.inner <= 0) {
        if (!accumulate) fill(gbias, 0.f, v.dim);
        return;
    }
    const int64_t splits = channel_splits(v);
    Scratch partial(*this, static_cast<size_t>(v.dim * splits) * sizeof(double));
    channel_partials<1>(*this, v, splits, SumLoad{gy}, partial.as<double>());
    channel_sum_finalize_kernel<<<grid_for(v.dim), kThreads, 0, stream_>>>(partial.as<double>(), splits, v.dim,
                                                                           gbias, accumulate);
    CW_LAUNCH_CHECK("channel_sum_finalize_kernel");
}

}  // namespace cw::cuda
