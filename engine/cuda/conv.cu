// Convolutions through cuDNN (NCHW float32, OIHW filters, cross-correlation as in PyTorch, no groups/dilation).
//
// Algorithm choice, once per full problem (ConvKey) and cached:
//   * default: cudnnFind*Ex times the candidates on the real inputs (like torch.backends.cudnn.benchmark), once
//     per range of batch sizes (conv_search_range: (2^(k-1), 2^k]); other sizes of the range reuse the algorithm
//     found, with their own workspace. Attacks that drop broken samples change the batch size step by step, and
//     a search per size cost AutoAttack more time than its steps;
//   * CLASSWISE_CUDNN_BENCHMARK=0, or deterministic mode: the cudnnGet*_v7 heuristics, whose ranking does not
//     depend on timing noise, so every run picks the same algorithm;
//   * deterministic mode admits only algorithms whose determinism field is CUDNN_DETERMINISTIC.
// Math: with TF32 on, the descriptor allows tensor cores (CUDNN_DEFAULT_MATH permits TF32 for float data, as in
// PyTorch; CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION is never used since it may also down-convert to FP16) and the
// chosen algorithm runs with the math type it was reported with; with TF32 off, search and run use CUDNN_FMA_MATH.
// The workspace is one grow-only buffer from the caching allocator.
#include <climits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"
#include "engine/cuda/index_math.h"
#include "engine/error.h"

namespace cw::cuda {

bool ConvKey::operator<(const ConvKey& o) const {
    return std::tie(pass, n, c, h, w, k, r, s, stride, pad, dtype, layout, tf32, deterministic, benchmark) <
           std::tie(o.pass, o.n, o.c, o.h, o.w, o.k, o.r, o.s, o.stride, o.pad, o.dtype, o.layout, o.tf32,
                    o.deterministic, o.benchmark);
}

namespace {

constexpr size_t kMaxWorkspace = size_t(1) << 30;  // never pick an algorithm that needs more than 1 GiB

const char* pass_name(ConvPass p) {
    return p == ConvPass::Forward ? "forward" : p == ConvPass::BackwardData ? "backward-data" : "backward-filter";
}

std::string problem(ConvPass p, const ConvGeometry& g) {
    return std::string("conv2d ") + pass_name(p) + " (N=" + std::to_string(g.n) + " C=" + std::to_string(g.c) +
           " H=" + std::to_string(g.h) + " W=" + std::to_string(g.w) + " K=" + std::to_string(g.k) +
           " R=" + std::to_string(g.r) + " S=" + std::to_string(g.s) + " stride=" + std::to_string(g.stride) +
           " pad=" + std::to_string(g.pad) + ")";
}

int dim(int64_t v, const ConvGeometry& g) {
    if (v < 0 || v > INT_MAX)
        throw DeviceError("cuDNN: a dimension exceeds 32 bits in " + problem(ConvPass::Forward, g));
    return static_cast<int>(v);
}

// The four descriptors of one problem, created per call (host-side structs, microseconds) and destroyed on scope
// exit, also when a check throws halfway.
struct Descs {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;

    explicit Descs(const ConvGeometry& g) {
        try {
            CW_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
            CW_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
            CW_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
            CW_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
            CW_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, dim(g.n, g), dim(g.c, g),
                                                      dim(g.h, g), dim(g.w, g)));
            CW_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, dim(g.k, g), dim(g.c, g),
                                                      dim(g.r, g), dim(g.s, g)));
            CW_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, dim(g.pad, g), dim(g.pad, g), dim(g.stride, g),
                                                           dim(g.stride, g), 1, 1, CUDNN_CROSS_CORRELATION,
                                                           CUDNN_DATA_FLOAT));
            int on = 0, oc = 0, oh = 0, ow = 0;
            CW_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv, x, w, &on, &oc, &oh, &ow));
            if (on != g.n || oc != g.k || oh != g.out_h() || ow != g.out_w())
                throw DeviceError("cuDNN computes a different output size for " + problem(ConvPass::Forward, g));
            CW_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow));
        } catch (...) {
            destroy();
            throw;
        }
    }
    ~Descs() { destroy(); }
    Descs(const Descs&) = delete;
    Descs& operator=(const Descs&) = delete;

    void destroy() {  // destruction status ignored: nothing useful to do with it
        if (conv) cudnnDestroyConvolutionDescriptor(conv);
        if (w) cudnnDestroyFilterDescriptor(w);
        if (y) cudnnDestroyTensorDescriptor(y);
        if (x) cudnnDestroyTensorDescriptor(x);
        conv = nullptr;
        w = nullptr;
        x = y = nullptr;
    }
};

// One algorithm report, whichever pass it came from (the three perf structs have the same fields).
struct Candidate {
    int algo;
    cudnnStatus_t status;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
};

template <class Perf>
std::vector<Candidate> candidates_of(const std::vector<Perf>& perf, int returned) {
    std::vector<Candidate> out;
    for (int i = 0; i < returned && i < static_cast<int>(perf.size()); ++i)
        out.push_back({static_cast<int>(perf[i].algo), perf[i].status, perf[i].memory, perf[i].determinism,
                       perf[i].mathType});
    return out;
}

int max_algo_count(cudnnHandle_t h, ConvPass p) {
    int count = 0;
    switch (p) {
        case ConvPass::Forward: CW_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count)); break;
        case ConvPass::BackwardData: CW_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count)); break;
        case ConvPass::BackwardFilter:
            CW_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
            break;
    }
    return std::max(count, 1);
}

// The heuristics' ranking (best first).
std::vector<Candidate> heuristic_candidates(cudnnHandle_t h, ConvPass p, const Descs& d) {
    const int want = max_algo_count(h, p);
    int got = 0;
    switch (p) {
        case ConvPass::Forward: {
            std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(want);
            CW_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, want, &got, perf.data()));
            return candidates_of(perf, got);
        }
        case ConvPass::BackwardData: {
            std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(want);
            CW_CUDNN_CHECK(
                cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, want, &got, perf.data()));
            return candidates_of(perf, got);
        }
        case ConvPass::BackwardFilter: {
            std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(want);
            CW_CUDNN_CHECK(
                cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, want, &got, perf.data()));
            return candidates_of(perf, got);
        }
    }
    return {};
}

// Timed on the real inputs (fastest first). `out` is a scratch buffer of the output's size: the search writes it.
std::vector<Candidate> timed_candidates(cudnnHandle_t h, ConvPass p, const Descs& d, const void* in0, const void* in1,
                                        void* out, void* ws, size_t ws_bytes) {
    const int want = max_algo_count(h, p);
    int got = 0;
    switch (p) {
        case ConvPass::Forward: {  // in0 = x, in1 = w, out = y
            std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(want);
            CW_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(h, d.x, in0, d.w, in1, d.conv, d.y, out, want, &got,
                                                                  perf.data(), ws, ws_bytes));
            return candidates_of(perf, got);
        }
        case ConvPass::BackwardData: {  // in0 = dy, in1 = w, out = dx
            std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(want);
            CW_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, d.w, in1, d.y, in0, d.conv, d.x, out, want,
                                                                       &got, perf.data(), ws, ws_bytes));
            return candidates_of(perf, got);
        }
        case ConvPass::BackwardFilter: {  // in0 = x, in1 = dy, out = dw
            std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(want);
            CW_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, d.x, in0, d.y, in1, d.conv, d.w, out, want,
                                                                         &got, perf.data(), ws, ws_bytes));
            return candidates_of(perf, got);
        }
    }
    return {};
}

// The workspace an algorithm needs with the descriptor's current math type; false if cuDNN rejects the pair.
bool workspace_size(cudnnHandle_t h, ConvPass p, const Descs& d, int algo, size_t* bytes) {
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    switch (p) {
        case ConvPass::Forward:
            s = cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y,
                                                        static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
            break;
        case ConvPass::BackwardData:
            s = cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x,
                                                             static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
            break;
        case ConvPass::BackwardFilter:
            s = cudnnGetConvolutionBackwardFilterWorkspaceSize(
                h, d.x, d.y, d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
            break;
    }
    return s == CUDNN_STATUS_SUCCESS;
}

bool eligible(const Candidate& c, bool deterministic) {
    if (c.status != CUDNN_STATUS_SUCCESS) return false;
    if (deterministic && c.determinism != CUDNN_DETERMINISTIC) return false;
    if (c.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return false;  // may compute in FP16
    return true;
}

size_t output_bytes(ConvPass p, const ConvGeometry& g) {
    const int64_t n = p == ConvPass::Forward        ? g.n * g.k * g.out_h() * g.out_w()
                      : p == ConvPass::BackwardData ? g.n * g.c * g.h * g.w
                                                    : g.k * g.c * g.r * g.s;
    return static_cast<size_t>(n) * sizeof(float);
}

bool is_out_of_memory(const DeviceError& e) {
    return std::string(e.what()).rfind("CUDA out of memory", 0) == 0;  // the allocator's message
}

// Device memory owned for one scope that tolerates failure to allocate (the timed search shrinks its workspace).
struct Block {
    DeviceAllocator& alloc;
    size_t bytes = 0;
    void* p = nullptr;
    ~Block() { alloc.deallocate(p, bytes); }
};

}  // namespace

ConvAlgo CudaBackend::conv_algo(ConvPass pass, const ConvGeometry& g, const void* in0, const void* in1) {
    const bool tf32 = tf32_enabled(), det = deterministic_enabled(), bench = cudnn_benchmark_enabled() && !det;
    const ConvKey key{static_cast<int>(pass), g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.stride, g.pad,
                      /*dtype float32*/ 0, /*layout NCHW*/ 0, tf32, det, bench};
    {
        std::lock_guard<std::mutex> lock(conv_mu_);
        auto it = conv_algos_.find(key);
        if (it != conv_algos_.end()) return it->second;
    }
    Descs d(g);
    ConvKey range_key = key;
    range_key.n = conv_search_range(g.n);
    if (bench) {
        std::optional<ConvAlgo> found;
        {
            std::lock_guard<std::mutex> lock(conv_mu_);
            auto it = conv_range_algos_.find(range_key);
            if (it != conv_range_algos_.end()) found = it->second;
        }
        size_t bytes = 0;
        if (found) {
            CW_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, found->math));
            if (workspace_size(cudnn_, pass, d, found->algo, &bytes) && bytes <= kMaxWorkspace) {
                bool have_workspace = true;
                try {
                    conv_workspace(bytes);
                } catch (const DeviceError& e) {
                    if (!is_out_of_memory(e)) throw;
                    have_workspace = false;   // search this size on its own, within the memory there is
                }
                if (have_workspace) {
                    const ConvAlgo chosen{found->algo, found->math, bytes};
                    std::lock_guard<std::mutex> lock(conv_mu_);
                    conv_algos_.emplace(key, chosen);
                    return chosen;
                }
            }
        }
    }
    CW_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    std::vector<Candidate> cands = heuristic_candidates(cudnn_, pass, d);
    size_t limit = kMaxWorkspace;
    if (bench) {
        // Search workspace: what the most demanding eligible candidate asks for, within the cap, halved until the
        // allocator can provide it (a candidate that needs more is then reported as failed and skipped). If even
        // the search cannot get memory, the heuristics' ranking stands.
        size_t want = 0;
        for (const Candidate& c : cands)
            if (eligible(c, det) && c.memory <= kMaxWorkspace) want = std::max(want, c.memory);
        Block ws{alloc_}, scratch{alloc_};
        bool have_memory = true;
        try {
            scratch.bytes = output_bytes(pass, g);
            scratch.p = alloc_.allocate(scratch.bytes);
            for (;;) {
                try {
                    ws.p = alloc_.allocate(want);
                    ws.bytes = want;
                    break;
                } catch (const DeviceError& e) {
                    if (!is_out_of_memory(e) || want == 0) throw;
                    want /= 2;
                }
            }
        } catch (const DeviceError& e) {
            if (!is_out_of_memory(e)) throw;
            have_memory = false;
        }
        if (have_memory) {
            cands = timed_candidates(cudnn_, pass, d, in0, in1, scratch.p, ws.p, ws.bytes);
            limit = ws.bytes;
        }
    }
    for (const Candidate& c : cands) {
        if (!eligible(c, det)) continue;
        // With TF32 off the search ran under CUDNN_FMA_MATH and the algorithm runs under it too, whatever math type
        // the report echoes, so tensor cores are never used then.
        const cudnnMathType_t math = tf32 ? c.math : CUDNN_FMA_MATH;
        CW_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, math));
        size_t bytes = 0;
        if (!workspace_size(cudnn_, pass, d, c.algo, &bytes) || bytes > limit) continue;
        try {
            conv_workspace(bytes);  // reserve it now: an algorithm whose workspace cannot be had is skipped
        } catch (const DeviceError& e) {
            if (!is_out_of_memory(e)) throw;
            continue;
        }
        const ConvAlgo chosen{c.algo, math, bytes};
        std::lock_guard<std::mutex> lock(conv_mu_);
        conv_algos_.emplace(key, chosen);
        if (bench) conv_range_algos_.emplace(range_key, chosen);   // the first size searched speaks for its range
        return chosen;
    }
    throw DeviceError("cuDNN offers no usable algorithm for " + problem(pass, g) +
                      (det ? " in deterministic mode" : "") + (tf32 ? "" : " with TF32 off") +
                      " within the GPU memory available");
}

void* CudaBackend::conv_workspace(size_t bytes) {
    std::lock_guard<std::mutex> lock(conv_mu_);
    if (bytes > workspace_bytes_) {
        // Grow only. The old block goes back to the cache; kernels still queued on it run before any new user.
        alloc_.deallocate(workspace_, workspace_bytes_);
        workspace_ = nullptr;
        workspace_bytes_ = 0;
        workspace_ = alloc_.allocate(bytes);
        workspace_bytes_ = bytes;
    }
    return workspace_;
}

void CudaBackend::conv2d_forward(const float* x, const float* w, float* y, const ConvGeometry& g) {
    if (g.n == 0 || g.k == 0 || g.out_h() <= 0 || g.out_w() <= 0) return;
    const ConvAlgo a = conv_algo(ConvPass::Forward, g, x, w);
    Descs d(g);
    CW_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, a.math));
    void* ws = conv_workspace(a.workspace);
    const float alpha = 1.f, beta = 0.f;
    CW_CUDNN_CHECK(cudnnConvolutionForward(cudnn_, &alpha, d.x, x, d.w, w, d.conv,
                                           static_cast<cudnnConvolutionFwdAlgo_t>(a.algo), ws, a.workspace, &beta, d.y,
                                           y));
}

void CudaBackend::conv2d_backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g) {
    if (g.n == 0 || g.c == 0 || g.h == 0 || g.w == 0) return;
    if (g.k == 0) {  // no filters: nothing flows back
        fill(gx, 0.f, g.n * g.c * g.h * g.w);
        return;
    }
    const ConvAlgo a = conv_algo(ConvPass::BackwardData, g, gy, w);
    Descs d(g);
    CW_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, a.math));
    void* ws = conv_workspace(a.workspace);
    const float alpha = 1.f, beta = 0.f;
    CW_CUDNN_CHECK(cudnnConvolutionBackwardData(cudnn_, &alpha, d.w, w, d.y, gy, d.conv,
                                                static_cast<cudnnConvolutionBwdDataAlgo_t>(a.algo), ws, a.workspace,
                                                &beta, d.x, gx));
}

void CudaBackend::conv2d_backward_filter(const float* x, const float* gy, float* gw, const ConvGeometry& g,
                                         bool accumulate) {
    const int64_t w_numel = g.k * g.c * g.r * g.s;
    if (w_numel == 0) return;
    if (g.n == 0) {  // an empty batch contributes nothing
        if (!accumulate) fill(gw, 0.f, w_numel);
        return;
    }
    const ConvAlgo a = conv_algo(ConvPass::BackwardFilter, g, x, gy);
    Descs d(g);
    CW_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, a.math));
    void* ws = conv_workspace(a.workspace);
    const float alpha = 1.f, beta = accumulate ? 1.f : 0.f;  // beta 0: gw is not read (it may be uninitialised)
    CW_CUDNN_CHECK(cudnnConvolutionBackwardFilter(cudnn_, &alpha, d.x, x, d.y, gy, d.conv,
                                                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(a.algo), ws,
                                                  a.workspace, &beta, d.w, gw));
}

}  // namespace cw::cuda
