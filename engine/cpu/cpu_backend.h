#pragma once
// The CPU reference backend: OpenBLAS for GEMM, OpenMP for everything else. Every other backend is tested
// against this one. Methods are implemented across engine/cpu/*.cpp, one file per kernel family.
#include <string>

#include "engine/backend.h"
#include "engine/cpu/onednn_conv.h"

namespace cw {

// ---- which code runs a convolution (engine/cpu/conv.cpp) ---------------------------------------------------------
// Native: Winograd for 3x3 stride-1 layers with enough channels, im2col + OpenBLAS otherwise. OneDnn: every
// convolution through oneDNN. Auto: oneDNN except where Winograd matched it (3x3 stride-1, >= 64 channels, large
// enough maps). Bf16 precision sends every convolution through oneDNN with bf16 inputs, whatever the path, and
// the matrix products of gemm() through oneDNN's bf16 matmul (engine/cpu/onednn_matmul.h).
enum class ConvPath { Native, OneDnn, Auto };
using ConvPrecision = onednn_conv::Precision;
struct ConvPolicy {
    ConvPath path = ConvPath::OneDnn;
    ConvPrecision precision = ConvPrecision::Fp32;
};
// CLASSWISE_CONV (auto|onednn|native) and CLASSWISE_PRECISION (fp32|bf16); null or empty text gives the
// default (onednn, fp32), anything else an Error naming the variable and the values it takes.
ConvPath parse_conv_path(const char* text);
ConvPrecision parse_conv_precision(const char* text);
// "fp32" or "bf16", the value of the setting `name` (a flag or the variable); anything else an Error naming it.
ConvPrecision parse_precision_flag(const std::string& name, const std::string& value);
// The policy that runs: bf16 on a CPU without native bf16 becomes fp32, and *note (when given) says so in one
// line, naming what asked for bf16; otherwise *note is left empty.
ConvPolicy resolve_conv_policy(ConvPath path, ConvPrecision precision, bool cpu_has_bf16, std::string* note,
                               const std::string& asked_by = "CLASSWISE_PRECISION=bf16");
// "CLASSWISE_CONV=onednn CLASSWISE_PRECISION=fp32": the setting as the environment would give it, for run records
// (job.json) and benchmark headers.
std::string describe(const ConvPolicy& policy);

class CpuBackend final : public Backend {
public:
    Device device() const override { return Device::cpu(); }

    void* allocate(size_t bytes) override;
    void deallocate(void* p, size_t bytes) override;
    void copy(void* dst, const void* src, size_t bytes) override;
    void fill(float* y, float value, int64_t n) override;
    void fill_i32(int32_t* y, int32_t value, int64_t n) override;
    void add_i32(int32_t* y, int32_t value, int64_t n) override;

    void unary(UnaryOp op, const float* x, float* y, int64_t n, float a, float b) override;
    void unary_backward(UnaryOp op, const float* x, const float* y, const float* gy, float* gx, int64_t n, float a,
                        float b) override;
    void binary(BinaryOp op, const float* a, const float* b, float* y, const BroadcastIndex& bi) override;
    void binary_backward(BinaryOp op, const float* a, const float* b, const float* gy, float* ga, float* gb,
                         const BroadcastIndex& bi) override;
    void sum_to(const float* x, float* y, const BroadcastIndex& bi, int64_t y_numel) override;
    void axpy(float alpha, const float* x, float* y, int64_t n) override;

    void sum_all(const float* x, float* y, int64_t n) override;
    void sum_axis(const float* x, float* y, AxisView v) override;
    void broadcast_axis(const float* x, float* y, AxisView v, float scale) override;
    void max_axis(const float* x, float* y, int32_t* idx, AxisView v) override;
    void topk_axis(const float* x, float* y, int32_t* idx, AxisView v, int64_t k) override;
    void scatter_axis_add(const float* gy, const int32_t* idx, float* gx, AxisView v, int64_t k) override;
    float sum_squares(const float* x, int64_t n) override;
    int64_t count_nonfinite(const float* x, int64_t n) override;

    void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
              const float* b, int64_t ldb, float beta, float* c, int64_t ldc) override;
    void add_channel_bias(float* y, const float* bias, AxisView v) override;
    void channel_sum(const float* gy, float* gbias, AxisView v, bool accumulate) override;

    void conv2d_forward(const float* x, const float* w, float* y, const ConvGeometry& g) override;
    void conv2d_backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g) override;
    void conv2d_backward_filter(const float* x, const float* gy, float* gw, const ConvGeometry& g,
                                bool accumulate) override;
    void conv2d_backward(const float* x, const float* w, const float* gy, float* gx, float* gw,
                         const ConvGeometry& g) override;
    void conv2d_bias_relu_forward(const float* x, const float* w, const float* bias, float* y,
                                  const ConvGeometry& g) override;
    void conv2d_relu_backward(const float* x, const float* w, const float* y, const float* gy, float* gx, float* gw,
                              float* gbias, const ConvGeometry& g) override;
    void conv2d_bias_relu_maxpool_forward(const float* x, const float* w, const float* bias, float* y,
                                          int32_t* argmax, const ConvGeometry& g) override;
    void conv2d_relu_maxpool_backward(const float* x, const float* w, const float* y, const int32_t* argmax,
                                      const float* gy, float* gx, float* gw, float* gbias,
                                      const ConvGeometry& g) override;

    void maxpool2d_forward(const float* x, float* y, int32_t* argmax, const PoolGeometry& g) override;
    void maxpool2d_backward(const float* gy, const int32_t* argmax, float* gx, const PoolGeometry& g) override;
    void avgpool2d_forward(const float* x, float* y, const PoolGeometry& g) override;
    void avgpool2d_backward(const float* gy, float* gx, const PoolGeometry& g) override;

    void batchnorm_forward_train(const float* x, const float* gamma, const float* beta, float* y, float* save_mean,
                                 float* save_invstd, float* running_mean, float* running_var, AxisView v,
                                 float momentum, float eps, bool relu) override;
    void batchnorm_forward_eval(const float* x, const float* gamma, const float* beta, float* y,
                                const float* running_mean, const float* running_var, AxisView v, float eps,
                                bool relu) override;
    void batchnorm_backward_train(const float* x, const float* gamma, const float* beta, const float* gy,
                                  const float* save_mean, const float* save_invstd, float* gx, float* ggamma,
                                  float* gbeta, AxisView v, bool relu) override;
    void batchnorm_backward_eval(const float* x, const float* gamma, const float* beta, const float* gy,
                                 const float* running_mean, const float* running_var, float* gx, float* ggamma,
                                 float* gbeta, AxisView v, float eps, bool relu) override;

    void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols, bool log) override;
    void softmax_rows_backward(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols,
                               bool log) override;
    void cross_entropy_forward(const float* logits, const int32_t* labels, float* loss, float* probs, int64_t rows,
                               int64_t cols, float smoothing) override;
    void cross_entropy_backward(const float* probs, const int32_t* labels, const float* gloss, float* glogits,
                                int64_t rows, int64_t cols, float smoothing) override;
    void kl_div_forward(const float* p_logits, const float* q_logits, float* loss, float* log_p, float* log_q,
                        int64_t rows, int64_t cols) override;
    void kl_div_backward(const float* log_p, const float* log_q, const float* gloss, float* gp, float* gq,
                         int64_t rows, int64_t cols) override;

    void gather_rows(const float* x, const int32_t* idx, float* y, int64_t rows, int64_t cols) override;
    void gather_rows_backward(const float* gy, const int32_t* idx, float* gx, int64_t rows, int64_t cols) override;
    void one_hot(const int32_t* labels, float* y, int64_t rows, int64_t cols) override;
    void copy_block(const float* src, float* dst, int64_t outer, int64_t block_inner, int64_t wide_inner,
                    int64_t offset, bool block_to_wide) override;
    void masked_scale(const float* x, const float* mask, float* y, int64_t n, float scale) override;

    void sgd_step(float* w, const float* g, float* momentum_buf, int64_t n, float lr, float momentum,
                  float dampening, float weight_decay, bool nesterov, bool first_step) override;
    void adam_step(float* w, const float* g, float* m, float* v, int64_t n, float lr, float beta1, float beta2,
                   float eps, float weight_decay, bool decoupled, int64_t step) override;
    void lerp_(float* avg, const float* x, int64_t n, float decay) override;

    void attack_objective(AttackObjective kind, const float* logits, const int32_t* labels, const int32_t* targets,
                          float kappa, float* value, float* dz, float* wrong, float* on_target, int64_t rows,
                          int64_t cols) override;
    void attack_step(AttackNorm norm, float* x_adv, const float* grad, const float* x_nat, const float* eps,
                     const float* alpha, int64_t n, int64_t dim) override;
    void copy_rows(const float* src, const int32_t* src_rows, float* dst, const int32_t* dst_rows, int64_t count,
                   int64_t row_len) override;
    void where_rows(const float* mask, const float* a, const float* b, float* y, int64_t n, int64_t row_len) override;
    void square_window(float* x_adv, const float* x_nat, const int32_t* rows, const float* eps, int64_t n, int64_t c,
                       int64_t h, int64_t w, int64_t top, int64_t left, int64_t side, uint32_t negative_channels) override;
    // fab_kernels.cpp
    void fab_step(float* x1, const float* x_nat, const float* grad, const float* value, int64_t n, int64_t dim, float eta,
                  float alpha_max) override;
    void fab_record(float* x1, const float* x_nat, const float* wrong, float beta, float* best_adv, float* best_dist,
                    int64_t n, int64_t dim) override;

    // Returns cached host buffers to the system.
    void release_cached_memory();

    // 3x3 stride-1 convolutions (forward and backward-data) use Winograd F(2x2, 3x3) unless switched off here
    // or by CLASSWISE_WINOGRAD=0; results differ from im2col only by float rounding.
    void set_winograd(bool enabled) { winograd_enabled_ = enabled; }
    bool winograd_enabled() const { return winograd_enabled_; }

    // Which code runs each convolution: CLASSWISE_CONV and CLASSWISE_PRECISION, read when the backend is made
    // (resolve_conv_policy's note printed then, once); set_conv_policy for tests and benchmarks (pass a resolved
    // policy: it is taken as it is).
    void set_conv_policy(ConvPolicy policy) { conv_policy_ = policy; }
    ConvPolicy conv_policy() const { return conv_policy_; }
    // Whether this geometry goes to oneDNN under the current policy.
    bool uses_onednn(const ConvGeometry& g) const;

protected:
    void do_copy_to_host(void* host_dst, const void* src, size_t bytes) override;
    void do_copy_from_host(void* dst, const void* host_src, size_t bytes) override;

private:
    bool use_winograd(const ConvGeometry& g) const;
    bool winograd_enabled_ = winograd_default();
    static bool winograd_default();
    ConvPolicy conv_policy_ = conv_policy_from_environment();
    static ConvPolicy conv_policy_from_environment();

    void backward_chunks(const float* x, const float* w, const float* gy, float* gx, float* gw,
                         const ConvGeometry& g, bool accumulate_gw);
};

CpuBackend& cpu_backend();

// ---- the OpenMP thread team (engine/cpu/threads.cpp) ----------------------------------------------------------
// Results never depend on the number of threads: every reduction sums fixed-size blocks in a fixed order.
constexpr int kMaxCpuThreads = 1024;
// `text` as a thread count in [1, kMaxCpuThreads]; otherwise an Error naming `name` and the text.
int parse_thread_count(const std::string& name, const char* text);
// The cores this process may use: its CPU affinity, capped by a cgroup CPU quota.
int available_cores();
// CLASSWISE_THREADS (an Error if malformed), else 0 when OMP_NUM_THREADS is set (libgomp applied it), else
// available_cores().
int cpu_threads_from_environment();
// Applies cpu_threads_from_environment(); cpu_backend() calls it once, on first use.
void configure_cpu_threads();
void set_cpu_threads(int n);  // for this thread's later parallel regions (tests, tools)
int cpu_threads();

// Below this many elements a loop runs on one thread: waking the team costs more than it saves.
constexpr int64_t kParallelGrain = 1 << 15;

}  // namespace cw
