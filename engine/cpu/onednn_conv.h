// The oneDNN convolution: forward, backward-data and backward-weights of the CPU backend's conv on our NCHW fp32
// tensors and OIHW fp32 weights, in fp32 or with bf16 inputs. engine/cpu/conv.cpp decides when it runs.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "engine/backend.h"
#include "engine/layout_copy.h"

namespace cw::onednn_conv {

// What the convolution multiplies. Bf16: the inputs (src, weights, diff_dst) are rounded to bf16 (to nearest,
// ties to even, as oneDNN's reorder does) and the products summed in fp32; every result (dst, diff_src,
// diff_weights) is fp32, and the fp32 buffers passed in are never modified.
enum class Precision { Fp32, Bf16 };

void forward(const float* x, const float* w, float* y, const ConvGeometry& g, Precision p);
void backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g, Precision p);

// The conv2d_relu op (y = relu(conv(x, w) + bias)) where it saves passes; each returns false, having done nothing,
// where the layouts do not allow it (the op then runs the convolution, the bias and relu as three steps).
// forward_bias_relu: the convolution as forward() does it, its output brought back into NCHW with the bias (null
// for none) added and relu applied on the way (engine/cpu/blocked_bias_relu.h), the same bits as the three steps.
// With pool_argmax (not null), the 2x2 max-pool is taken on the way too: y and pool_argmax are pooled (the
// convolution's output height and width even), the same bits as without it followed by the pool.
bool forward_bias_relu(const float* x, const float* w, const float* bias, float* y, const ConvGeometry& g,
                       Precision p, int32_t* pool_argmax = nullptr);
// relu_backward_bf16: the gradients in bf16 for relu's output y and its incoming gradient gy: gy gated by y and
// converted into the primitives' bf16 layout in one pass (engine/cpu/bf16_blocked.h), once for both directions,
// the bias gradient gbias summed in the same pass; y null: gy is relu's gradient already (converted ungated). gx, gw and gbias may each be null (gw is written, not added to).
bool relu_backward_bf16(const float* x, const float* w, const float* y, const float* gy, float* gx, float* gw,
                        float* gbias, const ConvGeometry& g);
// relu_maxpool_backward_bf16: the same for conv2d_relu_maxpool, from the pooled output y, its argmax and the pooled
// incoming gradient gy: relu's gradient scattered straight into the primitives' bf16 layout
// (bf16_blocked::pooled_relu_gated_scatter), no full-size fp32 gradient made.
bool relu_maxpool_backward_bf16(const float* x, const float* w, const float* y, const int32_t* argmax,
                                const float* gy, float* gx, float* gw, float* gbias, const ConvGeometry& g);
// gw (+)= the filter gradient.
void backward_weights(const float* x, const float* gy, float* gw, const ConvGeometry& g, bool accumulate,
                      Precision p);

// Whether this CPU multiplies bf16 natively (AVX512_BF16, by oneDNN's ISA query). Without it oneDNN would
// emulate bf16 at below fp32 speed.
bool cpu_has_bf16();

// Time spent running oneDNN since the last reset_time_split(), summed over every calling thread: the convolution
// primitives, and the reorders between our plain fp32 layouts and the primitives' own (blocked, bf16 where asked).
// `make bench` prints it per adversarial-training step, so a profile of where the step goes needs no tool.
struct TimeSplit {
    double convolution_ms = 0, reorder_ms = 0;
    double output_reorder_ms = 0;             // of the reorders, those from the primitive's output layout to ours
    int64_t convolutions = 0, reorders = 0;  // executions
    int64_t reorders_by_bf16_blocked = 0;     // of the reorders, those engine/cpu/bf16_blocked.h ran
    int64_t layout_copies_read = 0;           // conversions not run: the input's layout copy read instead
    int64_t kept_weights_read = 0;            // weight conversions not run: an earlier call's kept one read
};
TimeSplit time_split();
void reset_time_split();

// The data of a layout copy (engine/layout_copy.h) this file wrote for an activation of dims [n, c, h, w]: its
// nChw16c bf16 values, or null where `copy` is none or another kind. For tests and inspection.
const uint16_t* bf16_blocked_copy(const LayoutCopy* copy, int64_t n, int64_t c, int64_t h, int64_t w);

// A new such copy of the activation at `out`, [n, c, hw], for the kernel writing `out` to fill (*data) and hand over
// (layout_copy::put): where the calling op asked for one (layout_copy::requested) and bf16_blocked takes c channels;
// null otherwise. The caller decides that its output goes to bf16 convolutions.
std::shared_ptr<const LayoutCopy> requested_bf16_blocked_copy(const float* out, int64_t n, int64_t c, int64_t hw,
                                                              uint16_t** data);

// Built primitives held by the cache (one per shape, direction, precision and thread count).
size_t cached_plans();

// The implementation oneDNN chose for a direction ("jit:avx512_core", ...), for benchmarks and reports.
enum class Direction { Forward, BackwardData, BackwardWeights };
std::string implementation(const ConvGeometry& g, Direction d, Precision p);

}  // namespace cw::onednn_conv
