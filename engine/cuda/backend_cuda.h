#pragma once
// The CUDA backend: every Backend kernel on GPU 0, on one CUDA stream. cuDNN runs the convolutions, cuBLAS the
// GEMMs; everything else is our own kernels in engine/cuda/<family>.cu, one file per kernel family, each next to
// its host launcher. Only .cu files include this header (it pulls in the CUDA headers).
//
// Ordering: every kernel, copy and library call is queued on stream_, so a buffer freed on the host can be handed
// to the next allocation at once (the next user is queued after the last one). copy_to_host and the two
// host-valued reductions synchronise; copy_from_host does only where it cannot be staged (HostStaging).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engine/backend.h"
#include "engine/cuda/index_math.h"

namespace cw::cuda {

// ---- run-time switches (engine/cuda/plugin_entry.cu); read at start-up from the environment -------------------
bool tf32_enabled();             // CLASSWISE_TF32, default 1
bool deterministic_enabled();    // CLASSWISE_DETERMINISTIC, default 0
bool cudnn_benchmark_enabled();  // CLASSWISE_CUDNN_BENCHMARK, default 1
bool staged_uploads_enabled();   // CLASSWISE_STAGED_UPLOADS, default 1 (HostStaging below)
void set_tf32(bool on);
void set_deterministic(bool on);
void set_cudnn_benchmark(bool on);
void set_staged_uploads(bool on);

// ---- caching device allocator (engine/cuda/memory.cu) ----------------------------------------------------------
// Size-bucketed free lists (quarter-octave buckets, so a block is at most 25% larger than asked). cudaMalloc only
// on a miss; on out-of-memory every cached block is freed and the cudaMalloc retried once, then a DeviceError
// "CUDA out of memory allocating X MiB (Y MiB cached, Z MiB in use)" is thrown. Thread-safe. deallocate never
// calls CUDA, so tensors may be freed during static destruction.
class DeviceAllocator {
public:
    void* allocate(size_t bytes);
    void deallocate(void* p, size_t bytes);
    void release_cached();
    struct Stats {
        int64_t in_use, cached, peak_in_use, peak_reserved;
        int64_t cache_flushes;   // cudaMalloc failed, every cached block was freed and the cudaMalloc retried
    };
    Stats stats();
    void reset_peak();  // block sizes: bucket_size() in engine/cuda/index_math.h

private:
    void release_cached_locked();
    std::mutex mu_;
    std::unordered_map<size_t, std::vector<void*>> free_;
    size_t in_use_ = 0, cached_ = 0, peak_in_use_ = 0, peak_reserved_ = 0;
    int64_t cache_flushes_ = 0;
};

// ---- staged host-to-device copies (engine/cuda/host_staging.cu) ------------------------------------------------
// Pinned buffers, chosen by plan_staging (engine/cuda/index_math.h), each with an event marking the end of the copy
// that last read it, so the host returns as soon as the copy is queued. Thread-safe. Never freed: the backend lives
// as long as the process.
class HostStaging {
public:
    // Queues the copy on `stream` from a pinned buffer and returns true; false where the caller must copy directly
    // (switched off, a copy over kStagingMaxCopy, the budget spent, or pinned memory refused).
    bool upload(void* dst, const void* src, size_t bytes, cudaStream_t stream);

private:
    struct Buffer {
        void* host;
        cudaEvent_t done;
    };
    std::mutex mu_;
    std::vector<Buffer> buffers_;
    std::vector<StagingSlot> slots_;   // per buffer: what plan_staging decides on (busy refreshed before each plan)
    size_t pinned_ = 0;
    uint64_t clock_ = 0;
};

// ---- cuDNN convolution algorithm cache (engine/cuda/conv.cu) ---------------------------------------------------
enum class ConvPass { Forward, BackwardData, BackwardFilter };
// The full problem: geometry, data type and layout (always float32 NCHW here, kept in the key so that adding
// either later cannot alias entries), and every switch that changes which algorithms are eligible.
struct ConvKey {
    int pass;
    int64_t n, c, h, w, k, r, s, stride, pad;
    int dtype, layout, tf32, deterministic, benchmark;
    bool operator<(const ConvKey& o) const;
};
struct ConvAlgo {
    int algo;              // cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
    cudnnMathType_t math;  // the math type the algorithm was selected (and must run) with
    size_t workspace;      // bytes
};

class CudaBackend;

// Temporary device memory from the caching allocator, returned on scope exit (stream order makes that safe).
class Scratch {
public:
    Scratch(CudaBackend& b, size_t bytes);
    ~Scratch();
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    template <class T>
    T* as() const { return static_cast<T*>(p_); }

private:
    CudaBackend& b_;
    size_t bytes_;
    void* p_;
};

class CudaBackend final : public Backend {
public:
    CudaBackend();  // creates the stream and the cuBLAS / cuDNN handles on the current device; throws DeviceError
    Device device() const override { return Device::cuda(0); }

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

    // attack_kernels.cu
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
    // fab_kernels.cu
    void fab_step(float* x1, const float* x_nat, const float* grad, const float* value, int64_t n, int64_t dim, float eta,
                  float alpha_max) override;
    void fab_record(float* x1, const float* x_nat, const float* wrong, float beta, float* best_adv, float* best_dist,
                    int64_t n, int64_t dim) override;

    // ---- beyond the Backend interface ----
    cudaStream_t stream() const { return stream_; }
    DeviceAllocator& allocator() { return alloc_; }
    void synchronize();
    std::string memory_summary() override;   // memory.cu

protected:
    void do_copy_to_host(void* host_dst, const void* src, size_t bytes) override;
    void do_copy_from_host(void* dst, const void* host_src, size_t bytes) override;

private:
    // conv.cu
    // in0, in1: the pass's inputs (x, w / dy, w / x, dy); the timed search runs on them.
    ConvAlgo conv_algo(ConvPass pass, const ConvGeometry& g, const void* in0, const void* in1);
    void* conv_workspace(size_t bytes);

    cudaStream_t stream_ = nullptr;
    cublasHandle_t cublas_ = nullptr;
    cudnnHandle_t cudnn_ = nullptr;
    DeviceAllocator alloc_;
    HostStaging staging_;
    std::mutex conv_mu_;                    // guards the algorithm cache and the workspace
    std::map<ConvKey, ConvAlgo> conv_algos_;          // per full problem
    std::map<ConvKey, ConvAlgo> conv_range_algos_;    // timed searches, per batch-size range (conv_search_range)
    void* workspace_ = nullptr;             // grow-only, from alloc_
    size_t workspace_bytes_ = 0;
};

}  // namespace cw::cuda
