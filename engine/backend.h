#pragma once
// The kernel interface every device implements with identical signatures (CPU: engine/cpu, CUDA: engine/cuda).
// Ops in engine/ops validate shapes, allocate outputs and record autograd nodes, then call
// backend(device).kernel(...) — so there is one control flow for all devices and no per-device branching in ops.
// Pointers are device pointers of the backend's device; sizes are element counts.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/device.h"

namespace cw {

enum class UnaryOp {
    Neg, Exp, Log, Square, Sqrt, Abs, Sign, Relu, LeakyRelu, Sigmoid, Tanh,
    Silu,       // x * sigmoid(x) (SiLU, Swish)
    Pow,        // x^a
    AddScalar,  // x + a
    MulScalar,  // x * a
    RSubScalar, // a - x
    Clamp,      // min(max(x, a), b)
};
enum class BinaryOp {
    Add, Sub, Mul, Div, Min, Max,
    Greater, GreaterEqual,  // 1 where a > b (a >= b), else 0 (also for NaN); no gradient
};

// Per-sample objectives the attacks maximise (formulas: engine/attack_math.h; docs/protocols/attacks.md §1–§5).
enum class AttackObjective {
    CrossEntropy,        // CE(z, y)
    TargetCrossEntropy,  // −CE(z, t)
    CwMargin,            // −max(z_y − max_{j≠y} z_j + κ, 0)
    TargetMargin,        // z_t − max_{j≠t} z_j
    Dlr,                 // untargeted DLR (C ≥ 3)
    DlrTargeted,         // targeted DLR (C ≥ 4)
    LogitDifference,     // z_t − z_y (FAB)
};
enum class AttackNorm { Linf, L2 };

// Host <-> device copies made through a backend since start-up (the CPU backend counts its memcpy's too), so
// tests can assert that a loop does not copy per iteration.
struct HostTransfers {
    int64_t to_host = 0, from_host = 0;
    int64_t total() const { return to_host + from_host; }
};

// Elementwise broadcasting between tensors of equal rank: each dim of a and b equals the output dim or is 1.
// Strides are in elements; a broadcast dim has stride 0.
struct BroadcastIndex {
    static constexpr int kMaxDims = 8;
    int ndim = 0;
    int64_t out_shape[kMaxDims] = {};
    int64_t a_stride[kMaxDims] = {};
    int64_t b_stride[kMaxDims] = {};
    int64_t numel() const {
        int64_t n = 1;
        for (int i = 0; i < ndim; ++i) n *= out_shape[i];
        return n;
    }
};

struct ConvGeometry {
    int64_t n, c, h, w;      // input
    int64_t k, r, s;         // filters: k output channels, r x s kernel
    int64_t stride, pad;
    int64_t out_h() const { return (h + 2 * pad - r) / stride + 1; }
    int64_t out_w() const { return (w + 2 * pad - s) / stride + 1; }
};

struct PoolGeometry {
    int64_t n, c, h, w;
    int64_t kernel, stride, pad;
    int64_t out_h() const { return (h + 2 * pad - kernel) / stride + 1; }
    int64_t out_w() const { return (w + 2 * pad - kernel) / stride + 1; }
};

// A [outer, dim, inner] view of a tensor reduced or indexed along its middle axis.
struct AxisView {
    int64_t outer, dim, inner;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual Device device() const = 0;

    // memory
    virtual void* allocate(size_t bytes) = 0;
    virtual void deallocate(void* p, size_t bytes) = 0;
    // Counted (host_transfers()); backends implement do_copy_to_host / do_copy_from_host.
    void copy_to_host(void* host_dst, const void* src, size_t bytes) {
        to_host_.fetch_add(1, std::memory_order_relaxed);
        do_copy_to_host(host_dst, src, bytes);
    }
    void copy_from_host(void* dst, const void* host_src, size_t bytes) {
        from_host_.fetch_add(1, std::memory_order_relaxed);
        do_copy_from_host(dst, host_src, bytes);
    }
    HostTransfers host_transfers() const {
        return {to_host_.load(std::memory_order_relaxed), from_host_.load(std::memory_order_relaxed)};
    }
    // One line on the device memory this process used (peaks, and how often a full cache was emptied to retry an
    // allocation), for a run's log; empty where there is nothing to say (the CPU). Inline: the CUDA plugin resolves
    // every Backend member from this header alone.
    virtual std::string memory_summary() { return {}; }
    virtual void copy(void* dst, const void* src, size_t bytes) = 0;   // within this device
    virtual void fill(float* y, float value, int64_t n) = 0;
    virtual void fill_i32(int32_t* y, int32_t value, int64_t n) = 0;
    virtual void add_i32(int32_t* y, int32_t value, int64_t n) = 0;

    // elementwise
    virtual void unary(UnaryOp op, const float* x, float* y, int64_t n, float a, float b) = 0;
    // gx = (d op / dx) * gy; x is the input and y the forward output (each kernel uses what it needs).
    virtual void unary_backward(UnaryOp op, const float* x, const float* y, const float* gy, float* gx,
                                int64_t n, float a, float b) = 0;
    virtual void binary(BinaryOp op, const float* a, const float* b, float* y, const BroadcastIndex& bi) = 0;
    // Full-size (output-shaped) partial gradients; ga or gb may be null when not needed.
    virtual void binary_backward(BinaryOp op, const float* a, const float* b, const float* gy, float* ga,
                                 float* gb, const BroadcastIndex& bi) = 0;
    // y (shape of the broadcast operand a, strides in bi.a_stride) = sum of x (bi.out_shape) over broadcast dims.
    virtual void sum_to(const float* x, float* y, const BroadcastIndex& bi, int64_t y_numel) = 0;
    // y += alpha * x
    virtual void axpy(float alpha, const float* x, float* y, int64_t n) = 0;

    // reductions
    virtual void sum_all(const float* x, float* y, int64_t n) = 0;                     // y[0] = sum x
    virtual void sum_axis(const float* x, float* y, AxisView v) = 0;                   // [o,d,i] -> [o,i]
    virtual void broadcast_axis(const float* x, float* y, AxisView v, float scale) = 0; // [o,i] -> [o,d,i]
    virtual void max_axis(const float* x, float* y, int32_t* idx, AxisView v) = 0;
    virtual void topk_axis(const float* x, float* y, int32_t* idx, AxisView v, int64_t k) = 0;
    // gx (zero-filled by the caller) [o,d,i]; gx[o, idx[o,j,i], i] += gy[o,j,i] for j < k
    virtual void scatter_axis_add(const float* gy, const int32_t* idx, float* gx, AxisView v, int64_t k) = 0;
    virtual float sum_squares(const float* x, int64_t n) = 0;                          // for norms / inspection
    virtual int64_t count_nonfinite(const float* x, int64_t n) = 0;

    // linear algebra: C[M,N] = alpha * op(A) op(B) + beta * C, row-major
    virtual void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) = 0;
    // y[n, c, ...] += bias[c] over an [outer, c, inner] view
    virtual void add_channel_bias(float* y, const float* bias, AxisView v) = 0;
    virtual void channel_sum(const float* gy, float* gbias, AxisView v, bool accumulate) = 0;

    // convolution (NCHW, OIHW weights, no groups/dilation)
    virtual void conv2d_forward(const float* x, const float* w, float* y, const ConvGeometry& g) = 0;
    virtual void conv2d_backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g) = 0;
    // gw = (accumulate ? gw : 0) + dL/dw
    virtual void conv2d_backward_filter(const float* x, const float* gy, float* gw, const ConvGeometry& g,
                                        bool accumulate) = 0;
    // Both gradients in one call (gx or gw may be null); backends override it where the two share work
    // (the CPU transposes gy into GEMM layout once for both).
    virtual void conv2d_backward(const float* x, const float* w, const float* gy, float* gx, float* gw,
                                 const ConvGeometry& g) {
        if (gx) conv2d_backward_data(gy, w, gx, g);
        if (gw) conv2d_backward_filter(x, gy, gw, g, false);
    }
    // A float buffer of this backend's memory for the defaults below, freed however the function holding it returns.
    struct ScopedBuffer {
        Backend& owner;
        size_t bytes;
        float* p = static_cast<float*>(owner.allocate(bytes));
        ~ScopedBuffer() { owner.deallocate(p, bytes); }
    };
    // The conv2d_relu op: y = relu(conv(x, w) + bias), bias null for none. Backends override it where the steps
    // share passes (the CPU brings oneDNN's output back with the bias and relu applied); the default runs them one
    // by one. (Defined here, not in a .cpp: the CUDA plugin links none of the library.)
    virtual void conv2d_bias_relu_forward(const float* x, const float* w, const float* bias, float* y,
                                          const ConvGeometry& g) {
        const AxisView channels{g.n, g.k, g.out_h() * g.out_w()};
        conv2d_forward(x, w, y, g);
        if (bias) add_channel_bias(y, bias, channels);
        unary(UnaryOp::Relu, y, y, channels.outer * channels.dim * channels.inner, 0.f, 0.f);
    }
    // Its gradients, from relu's output y and incoming gradient gy: relu's gradient (gy where y > 0 or NaN, else 0:
    // relu(z) is 0 exactly where z <= 0) through the convolution into gx and gw and summed into gbias, each written
    // (not added to) and each may be null. y null: gy is relu's gradient already (conv2d_relu_maxpool gates it
    // before the pool's scatter). The default gates into a buffer of its own, then runs the convolution's backward
    // and the bias sum.
    virtual void conv2d_relu_backward(const float* x, const float* w, const float* y, const float* gy, float* gx,
                                      float* gw, float* gbias, const ConvGeometry& g) {
        const AxisView channels{g.n, g.k, g.out_h() * g.out_w()};
        if (!y) {
            conv2d_backward(x, w, gy, gx, gw, g);
            if (gbias) channel_sum(gy, gbias, channels, false);
            return;
        }
        const int64_t n = channels.outer * channels.dim * channels.inner;
        const ScopedBuffer gated{*this, sizeof(float) * static_cast<size_t>(n)};
        // relu's backward reads the sign of its input; its output has the same pattern (0 where the input was
        // <= 0, NaN where it was NaN, the input itself elsewhere).
        unary_backward(UnaryOp::Relu, y, y, gy, gated.p, n, 0.f, 0.f);
        conv2d_backward(x, w, gated.p, gx, gw, g);
        if (gbias) channel_sum(gated.p, gbias, channels, false);
    }

    // The conv2d_relu_maxpool op: y = the 2x2, stride-2 max-pool of relu(conv(x, w) + bias), with the pool's
    // argmax (as maxpool2d_forward writes it); the convolution's output height and width are even. The default
    // runs conv2d_bias_relu_forward into a buffer of its own, then the pool.
    virtual void conv2d_bias_relu_maxpool_forward(const float* x, const float* w, const float* bias, float* y,
                                                  int32_t* argmax, const ConvGeometry& g) {
        const ScopedBuffer full{*this, sizeof(float) * static_cast<size_t>(g.n * g.k * g.out_h() * g.out_w())};
        conv2d_bias_relu_forward(x, w, bias, full.p, g);
        maxpool2d_forward(full.p, y, argmax, PoolGeometry{g.n, g.k, g.out_h(), g.out_w(), 2, 2, 0});
    }
    // Its gradients (gx, gw, gbias as conv2d_relu_backward's) from the pooled output y, its argmax and the pooled
    // incoming gradient gy. The default gates gy at y (relu's output where each window took its value), scatters it
    // as the pool's backward does, so the full-size gradient is relu's gradient already, and runs
    // conv2d_relu_backward on it with y null: the arithmetic of conv2d_relu followed by max_pool2d, in their order.
    virtual void conv2d_relu_maxpool_backward(const float* x, const float* w, const float* y, const int32_t* argmax,
                                              const float* gy, float* gx, float* gw, float* gbias,
                                              const ConvGeometry& g) {
        const PoolGeometry pool{g.n, g.k, g.out_h(), g.out_w(), 2, 2, 0};
        const int64_t pooled = g.n * g.k * pool.out_h() * pool.out_w();
        const ScopedBuffer gated{*this, sizeof(float) * static_cast<size_t>(pooled)},
            full{*this, sizeof(float) * static_cast<size_t>(g.n * g.k * g.out_h() * g.out_w())};
        unary_backward(UnaryOp::Relu, y, y, gy, gated.p, pooled, 0.f, 0.f);
        maxpool2d_backward(gated.p, argmax, full.p, pool);
        conv2d_relu_backward(x, w, nullptr, full.p, gx, gw, gbias, g);
    }

    // pooling
    virtual void maxpool2d_forward(const float* x, float* y, int32_t* argmax, const PoolGeometry& g) = 0;
    virtual void maxpool2d_backward(const float* gy, const int32_t* argmax, float* gx, const PoolGeometry& g) = 0;
    // count_include_pad semantics: the divisor is always kernel*kernel (PyTorch default)
    virtual void avgpool2d_forward(const float* x, float* y, const PoolGeometry& g) = 0;
    virtual void avgpool2d_backward(const float* gy, float* gx, const PoolGeometry& g) = 0;

    // batch norm over [N, C, HW], optionally fused with the ReLU after it (`relu`): the forward writes
    // max(bn(x), 0) in the same pass, and the backward masks gy where bn(x) <= 0, recomputing bn(x) from x with
    // the forward's own arithmetic (so it needs beta), instead of a ReLU op's extra pass over the tensor each way.
    virtual void batchnorm_forward_train(const float* x, const float* gamma, const float* beta, float* y,
                                         float* save_mean, float* save_invstd, float* running_mean,
                                         float* running_var, AxisView v, float momentum, float eps, bool relu) = 0;
    virtual void batchnorm_forward_eval(const float* x, const float* gamma, const float* beta, float* y,
                                        const float* running_mean, const float* running_var, AxisView v,
                                        float eps, bool relu) = 0;
    // gx, ggamma, gbeta may be null when not needed; ggamma/gbeta are overwritten.
    virtual void batchnorm_backward_train(const float* x, const float* gamma, const float* beta, const float* gy,
                                          const float* save_mean, const float* save_invstd, float* gx,
                                          float* ggamma, float* gbeta, AxisView v, bool relu) = 0;
    virtual void batchnorm_backward_eval(const float* x, const float* gamma, const float* beta, const float* gy,
                                         const float* running_mean, const float* running_var, float* gx,
                                         float* ggamma, float* gbeta, AxisView v, float eps, bool relu) = 0;

    // rows of logits [rows, cols]
    virtual void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols, bool log) = 0;
    virtual void softmax_rows_backward(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols,
                                       bool log) = 0;
    // per-sample CE with label smoothing; also writes softmax probabilities for the backward
    virtual void cross_entropy_forward(const float* logits, const int32_t* labels, float* loss, float* probs,
                                       int64_t rows, int64_t cols, float smoothing) = 0;
    // glogits[i,:] = gloss[i] * (probs[i,:] - target_i)
    virtual void cross_entropy_backward(const float* probs, const int32_t* labels, const float* gloss,
                                        float* glogits, int64_t rows, int64_t cols, float smoothing) = 0;
    // per-sample KL(softmax(p) || softmax(q)); saves both log-softmaxes for the backward
    virtual void kl_div_forward(const float* p_logits, const float* q_logits, float* loss, float* log_p,
                                float* log_q, int64_t rows, int64_t cols) = 0;
    virtual void kl_div_backward(const float* log_p, const float* log_q, const float* gloss, float* gp,
                                 float* gq, int64_t rows, int64_t cols) = 0;

    // indexing
    virtual void gather_rows(const float* x, const int32_t* idx, float* y, int64_t rows, int64_t cols) = 0;
    virtual void gather_rows_backward(const float* gy, const int32_t* idx, float* gx, int64_t rows,
                                      int64_t cols) = 0;  // gx overwritten
    virtual void one_hot(const int32_t* labels, float* y, int64_t rows, int64_t cols) = 0;
    // Concat along channels and its backward: block_to_wide copies src [outer, block_inner] into columns
    // [offset, offset + block_inner) of dst [outer, wide_inner]; otherwise src is the wide tensor and dst the block.
    virtual void copy_block(const float* src, float* dst, int64_t outer, int64_t block_inner, int64_t wide_inner,
                            int64_t offset, bool block_to_wide) = 0;
    virtual void masked_scale(const float* x, const float* mask, float* y, int64_t n, float scale) = 0;

    // optimiser updates, in place (PyTorch semantics; see nn/optim.h)
    virtual void sgd_step(float* w, const float* g, float* momentum_buf, int64_t n, float lr, float momentum,
                          float dampening, float weight_decay, bool nesterov, bool first_step) = 0;
    virtual void adam_step(float* w, const float* g, float* m, float* v, int64_t n, float lr, float beta1,
                           float beta2, float eps, float weight_decay, bool decoupled, int64_t step) = 0;
    // theta_avg = decay * theta_avg + (1 - decay) * theta
    virtual void lerp_(float* avg, const float* x, int64_t n, float decay) = 0;

    // attacks (formulas: engine/attack_math.h). Per row of logits [rows, cols]: value[i] = J(z_i), dz[i,:] =
    // dJ/dz_i (dz may be null), wrong[i] = [argmax z_i ≠ labels[i]], on_target[i] = [argmax z_i = targets[i]]
    // (0 when targets is null; targets is required by the targeted objectives).
    virtual void attack_objective(AttackObjective kind, const float* logits, const int32_t* labels,
                                  const int32_t* targets, float kappa, float* value, float* dz, float* wrong,
                                  float* on_target, int64_t rows, int64_t cols) = 0;
    // One projected step on n samples of dim values each, in place: x_adv ← Π(x_adv + α_i·dir(grad_i)), where dir
    // is sign (L∞) or g/(||g||₂ + 1e-10) (L2) and Π is the ε_i-ball around x_nat, then the box [0,1]. grad null:
    // the projection alone.
    virtual void attack_step(AttackNorm norm, float* x_adv, const float* grad, const float* x_nat, const float* eps,
                             const float* alpha, int64_t n, int64_t dim) = 0;
    // dst row dst_rows[k] = src row src_rows[k] for k < count (rows of row_len values; a null index array means
    // row k). Rows written must be distinct.
    virtual void copy_rows(const float* src, const int32_t* src_rows, float* dst, const int32_t* dst_rows,
                           int64_t count, int64_t row_len) = 0;
    // y row i = (mask[i] != 0 ? a : b) row i, exactly (y may alias a or b).
    virtual void where_rows(const float* mask, const float* a, const float* b, float* y, int64_t n,
                            int64_t row_len) = 0;
    // Square's step on n images [n, c, h, w] in place: the side×side window at (top, left) of image k becomes
    // square_window_value(x, x_nat, ε, σ_ch), where x_nat and ε are row rows[k] of x_nat [*, c, h, w] and eps [*],
    // and σ_ch = −1 where bit ch of negative_channels is set, else +1 (c ≤ 32). Values outside the window stay.
    virtual void square_window(float* x_adv, const float* x_nat, const int32_t* rows, const float* eps, int64_t n,
                               int64_t c, int64_t h, int64_t w, int64_t top, int64_t left, int64_t side,
                               uint32_t negative_channels) = 0;
    // FAB-T on n rows of dim values (formulas: attack_math::fab_*; the projection: engine/linf_box_projection.h).
    // fab_step, in place: with w = grad_i and b = ⟨w, x1_i⟩ − value_i, d1 and d2 project x1_i and x_nat_i onto
    // ⟨w, v⟩ = b inside the box, and x1_i ← fab_mix(x1, d1, x_nat, d2, η, fab_alpha(|d1|∞, |d2|∞, α_max)).
    virtual void fab_step(float* x1, const float* x_nat, const float* grad, const float* value, int64_t n, int64_t dim,
                          float eta, float alpha_max) = 0;
    // fab_record, for each row with wrong[i] ≠ 0: dist = ||x1_i − x_nat_i||∞; where dist < best_dist[i] the row is
    // the new best (best_dist[i] = dist, best_adv_i = x1_i); then x1_i ← fab_pull_back(x1_i, x_nat_i, β).
    virtual void fab_record(float* x1, const float* x_nat, const float* wrong, float beta, float* best_adv,
                            float* best_dist, int64_t n, int64_t dim) = 0;

protected:
    virtual void do_copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
    virtual void do_copy_from_host(void* dst, const void* host_src, size_t bytes) = 0;

private:
    std::atomic<int64_t> to_host_{0}, from_host_{0};
};

// The backend for a device. Throws DeviceError if that backend is not built in or no device is usable.
Backend& backend(Device d);

}  // namespace cw
