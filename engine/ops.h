#pragma once
// The op facade: every differentiable operation of the engine. Each op validates its inputs (an exception that
// names the op and the shapes — never a silent broadcast), runs the kernel of the inputs' device, and records
// its backward on the tape when an input needs a gradient. Forward and backward of an op sit side by side in
// engine/ops/<family>.cpp.
#include <vector>

#include "engine/autograd.h"
#include "engine/rng.h"
#include "engine/tensor.h"

namespace cw {

// ---- elementwise ---------------------------------------------------------------------------------------------
// Binary ops broadcast between tensors of EQUAL rank where each dim matches or one side is 1 (per-channel
// [1,C,1,1], per-sample [N,1,1,1]); a 0-d tensor broadcasts against anything. Anything else is a ShapeError.
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
// Comparisons: 1 where a > b (a >= b), else 0 (NaN compares false); piecewise constant, so never recorded.
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);

Tensor add(const Tensor& x, float s);
Tensor mul(const Tensor& x, float s);
Tensor rsub(float s, const Tensor& x);   // s - x
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor square(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor pow(const Tensor& x, float exponent);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);            // sign(0) = 0; gradient 0
Tensor clamp(const Tensor& x, float lo, float hi);
Tensor relu(const Tensor& x);
Tensor leaky_relu(const Tensor& x, float negative_slope = 0.01f);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor silu(const Tensor& x);            // x * sigmoid(x) (SiLU / Swish: the DeepMind-style robust models)

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, float s) { return add(a, s); }
inline Tensor operator-(const Tensor& a, float s) { return add(a, -s); }
inline Tensor operator*(const Tensor& a, float s) { return mul(a, s); }
inline Tensor operator*(float s, const Tensor& a) { return mul(a, s); }
inline Tensor operator/(const Tensor& a, float s) { return mul(a, 1.f / s); }
inline Tensor operator-(float s, const Tensor& a) { return rsub(s, a); }
inline Tensor operator-(const Tensor& a) { return neg(a); }

// ---- reductions and indexing ---------------------------------------------------------------------------------
Tensor sum(const Tensor& x);                                   // 0-d
Tensor sum(const Tensor& x, int dim, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, int dim, bool keepdim = false);
Tensor max(const Tensor& x, int dim, bool keepdim = false);    // values; the gradient goes to the argmax
Tensor argmax(const Tensor& x, int dim);                       // int32, no gradient
struct TopK {
    Tensor values;   // [..., k, ...], differentiable
    Tensor indices;  // int32
};
TopK topk(const Tensor& x, int64_t k, int dim);
Tensor gather(const Tensor& x, const Tensor& index);           // x [N, C], index int32 [N] -> x[i, index[i]]
Tensor one_hot(const Tensor& labels, int64_t num_classes);     // int32 [N] -> float [N, C]

// ---- shape ---------------------------------------------------------------------------------------------------
Tensor reshape(const Tensor& x, const Shape& shape);           // one dim may be -1; shares storage
Tensor flatten(const Tensor& x);                               // [N, ...] -> [N, rest]
Tensor concat(const std::vector<Tensor>& xs, int dim);

// ---- losses and probabilities --------------------------------------------------------------------------------
enum class Reduction { None, Mean, Sum };
Tensor softmax(const Tensor& logits);      // along the last dim of a 2-d tensor
Tensor log_softmax(const Tensor& logits);
struct CrossEntropyOptions {
    float label_smoothing = 0.f;
    Tensor sample_weights;                 // optional [N]; constant (no gradient), e.g. FRL/CFA class weights
    Reduction reduction = Reduction::Mean; // Mean = sum_i w_i * l_i / N
};
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, const CrossEntropyOptions& opt = {});
// Per-row KL(softmax(p_logits) || softmax(q_logits)); gradients flow into both. Mean = sum over rows / N
// (PyTorch's 'batchmean').
Tensor kl_div(const Tensor& p_logits, const Tensor& q_logits, Reduction reduction = Reduction::Mean);

// ---- layers --------------------------------------------------------------------------------------------------
Tensor matmul(const Tensor& a, const Tensor& b);                                   // [M,K] x [K,N]
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});     // x W^T + b, W [out, in]
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1, int64_t padding = 0);
// relu(conv2d(x, weight, bias)), the same values and gradients, fewer passes over the output (engine/ops/conv.cpp).
Tensor conv2d_relu(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1,
                   int64_t padding = 0);
// max_pool2d(relu(conv2d(x, weight, bias)), 2), the same values and gradients, the full-size output never written
// (engine/ops/conv.cpp). The convolution's output height and width must be even.
Tensor conv2d_relu_maxpool(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1,
                           int64_t padding = 0);
Tensor max_pool2d(const Tensor& x, int64_t kernel, int64_t stride = -1, int64_t padding = 0);  // stride -1 = kernel
Tensor avg_pool2d(const Tensor& x, int64_t kernel, int64_t stride = -1, int64_t padding = 0);
Tensor global_avg_pool2d(const Tensor& x);                                         // [N,C,H,W] -> [N,C]
// Training: batch statistics, running statistics updated in place with `momentum` (PyTorch convention);
// eval: running statistics. x is [N,C,H,W] or [N,C].
Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& running_mean,
                  Tensor& running_var, bool training, float momentum = 0.1f, float eps = 1e-5f);
// relu(batch_norm(...)) in one pass each way (the pre-activation blocks' bn -> relu): equal to the two ops, value
// for value and gradient for gradient, without the intermediate tensor or the ReLU's passes over it.
Tensor batch_norm_relu(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& running_mean,
                       Tensor& running_var, bool training, float momentum = 0.1f, float eps = 1e-5f);
Tensor dropout(const Tensor& x, float p, bool training, Rng& rng);

}  // namespace cw
