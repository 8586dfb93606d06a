// The FLOPs a step spends in convolutions and matrix products, counted from what the engine actually ran: the
// step runs once under a TapeRecorder, which lists every recorded conv2d(_relu) / linear / matmul with its shapes and,
// after backward, which input gradients were computed. Each op counts 2·MACs for its forward, and again 2·MACs
// for each gradient its backward computed: backward-data (input 0) and backward-weights (input 1) each cost what
// the forward costs. So the count follows the code: an attack step (InputGradOnly) computes no weight gradient,
// and a training step computes no data gradient for the first layer (the images need none).
// Only ops that record reach the tape: a forward under NoGradGuard is not counted (the steps benchmarked here
// run none). Every counted op is linear in the batch, so a step counted at a small batch scales exactly.
#pragma once

#include <cstdint>
#include <string>

#include "engine/autograd.h"

namespace cw_bench {

struct StepFlops {
    double forward = 0, backward_data = 0, backward_weights = 0;
    double total() const { return forward + backward_data + backward_weights; }
    StepFlops scaled(double f) const { return {forward * f, backward_data * f, backward_weights * f}; }
};

// Multiply-accumulates of one tape entry, 0 for ops that are not convolutions or matrix products.
inline double gemm_macs(const cw::TapeRecorder::Entry& e) {
    auto dim = [](const cw::Shape& s, size_t i) { return static_cast<double>(s.at(i)); };
    if (e.op == "conv2d" || e.op == "conv2d_relu") {  // x [N, C, H, W], w [K, C, R, S], y [N, K, P, Q]
        const cw::Shape &w = e.input_shapes.at(1), &y = e.output_shape;
        return dim(y, 0) * dim(y, 1) * dim(y, 2) * dim(y, 3) * dim(w, 1) * dim(w, 2) * dim(w, 3);
    }
    if (e.op == "conv2d_relu_maxpool") {  // y [N, K, P/2, Q/2]: the op requires P and Q even, so they are exact
        const cw::Shape &w = e.input_shapes.at(1), &y = e.output_shape;
        return dim(y, 0) * dim(y, 1) * (2 * dim(y, 2)) * (2 * dim(y, 3)) * dim(w, 1) * dim(w, 2) * dim(w, 3);
    }
    if (e.op == "linear") {  // x [n, in], w [out, in]
        const cw::Shape &x = e.input_shapes.at(0), &w = e.input_shapes.at(1);
        return dim(x, 0) * dim(x, 1) * dim(w, 0);
    }
    if (e.op == "matmul") {  // a [m, k], b [k, n]
        const cw::Shape &a = e.input_shapes.at(0), &b = e.input_shapes.at(1);
        return dim(a, 0) * dim(a, 1) * dim(b, 1);
    }
    return 0;
}

// The entry's input i received a gradient in the backward pass: the recorder keeps -1 for the others, and the
// gradient's L2 norm (NaN for a NaN gradient, still computed work) for these.
inline bool computed_grad(const cw::TapeRecorder::Entry& e, size_t i) {
    return i < e.grad_in_norms.size() && e.grad_in_norms[i] != -1;
}

inline StepFlops flops_of(const cw::TapeRecorder& tape) {
    StepFlops f;
    for (const auto& e : tape.entries()) {
        const double flops = 2 * gemm_macs(e);
        if (flops == 0) continue;
        f.forward += flops;
        if (computed_grad(e, 0)) f.backward_data += flops;
        if (computed_grad(e, 1)) f.backward_weights += flops;
    }
    return f;
}

// Runs `step` once under a recorder and counts it.
template <class Step>
StepFlops count_flops(Step step) {
    cw::TapeRecorder tape;
    step();
    return flops_of(tape);
}

}  // namespace cw_bench
