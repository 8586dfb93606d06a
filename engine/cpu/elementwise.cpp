// Elementwise kernels: unary maps, broadcasting binary maps, and the reduction back to a broadcast operand.
#include <cmath>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/ordered_sum.h"

namespace cw {

namespace {
// The lambdas capture pointers by value and load every operand unconditionally: both are what lets GCC
// vectorise a select such as relu's backward (measured: 4x on the small CNN's activations).
template <class F>
void map_n(int64_t n, F f) {
#pragma omp parallel for schedule(static) if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) f(i);
}

// sum_to's fixed number of row groups (a multiple of the common thread counts 2, 4 and 8).
constexpr int64_t kSumToGroups = 8;

inline float sign_of(float v) { return static_cast<float>((v > 0) - (v < 0)); }
inline float sigmoid(float v) { return v >= 0 ? 1.f / (1.f + std::exp(-v)) : std::exp(v) / (1.f + std::exp(v)); }

// Walks the output of a broadcast in rows of its last dim; calls f(out_offset, a_offset, b_offset, row_len,
// a_step, b_step) per row. Rows are independent, so they run in parallel.
template <class F>
void for_each_row(const BroadcastIndex& bi, bool parallel, F f) {
    const int nd = bi.ndim;
    if (nd == 0) {
        f(0, 0, 0, 1, 0, 0);
        return;
    }
    const int64_t len = bi.out_shape[nd - 1];
    const int64_t rows = len ? bi.numel() / len : 0;
#pragma omp parallel for schedule(static) if (parallel && rows * len > kParallelGrain && rows > 1)
    for (int64_t r = 0; r < rows; ++r) {
        int64_t rem = r, ao = 0, bo = 0;
        for (int d = nd - 2; d >= 0; --d) {
            const int64_t coord = rem % bi.out_shape[d];
            rem /= bi.out_shape[d];
            ao += coord * bi.a_stride[d];
            bo += coord * bi.b_stride[d];
        }
        f(r * len, ao, bo, len, bi.a_stride[nd - 1], bi.b_stride[nd - 1]);
    }
}

template <class Op>
void binary_rows(const float* a, const float* b, float* y, const BroadcastIndex& bi, Op op) {
    for_each_row(bi, true, [&](int64_t yo, int64_t ao, int64_t bo, int64_t len, int64_t as, int64_t bs) {
        const float* pa = a + ao;
        const float* pb = b + bo;
        float* py = y + yo;
        if (as == 1 && bs == 1) {
            for (int64_t j = 0; j < len; ++j) py[j] = op(pa[j], pb[j]);
        } else if (as == 1 && bs == 0) {
            const float vb = *pb;
            for (int64_t j = 0; j < len; ++j) py[j] = op(pa[j], vb);
        } else if (as == 0 && bs == 1) {
            const float va = *pa;
            for (int64_t j = 0; j < len; ++j) py[j] = op(va, pb[j]);
        } else {
            for (int64_t j = 0; j < len; ++j) py[j] = op(pa[j * as], pb[j * bs]);
        }
    });
}
}  // namespace

void CpuBackend::unary(UnaryOp op, const float* x, float* y, int64_t n, float a, float b) {
    switch (op) {
        case UnaryOp::Neg: map_n(n, [=](int64_t i) { y[i] = -x[i]; }); break;
        case UnaryOp::Exp: map_n(n, [=](int64_t i) { y[i] = std::exp(x[i]); }); break;
        case UnaryOp::Log: map_n(n, [=](int64_t i) { y[i] = std::log(x[i]); }); break;
        case UnaryOp::Square: map_n(n, [=](int64_t i) { y[i] = x[i] * x[i]; }); break;
        case UnaryOp::Sqrt: map_n(n, [=](int64_t i) { y[i] = std::sqrt(x[i]); }); break;
        case UnaryOp::Abs: map_n(n, [=](int64_t i) { y[i] = std::fabs(x[i]); }); break;
        case UnaryOp::Sign: map_n(n, [=](int64_t i) { y[i] = sign_of(x[i]); }); break;
        // Written so that a NaN input fails the comparison and comes out as NaN, as in PyTorch: a NaN weight must
        // show in the output instead of being turned into 0 by the first ReLU or clamp.
        case UnaryOp::Relu: map_n(n, [=](int64_t i) { const float v = x[i]; y[i] = v <= 0 ? 0.f : v; }); break;
        case UnaryOp::LeakyRelu: map_n(n, [=](int64_t i) { y[i] = x[i] > 0 ? x[i] : a * x[i]; }); break;
        case UnaryOp::Sigmoid: map_n(n, [=](int64_t i) { y[i] = sigmoid(x[i]); }); break;
        case UnaryOp::Tanh: map_n(n, [=](int64_t i) { y[i] = std::tanh(x[i]); }); break;
        case UnaryOp::Silu: map_n(n, [=](int64_t i) { y[i] = x[i] * sigmoid(x[i]); }); break;
        case UnaryOp::Pow: map_n(n, [=](int64_t i) { y[i] = std::pow(x[i], a); }); break;
        case UnaryOp::AddScalar: map_n(n, [=](int64_t i) { y[i] = x[i] + a; }); break;
        case UnaryOp::MulScalar: map_n(n, [=](int64_t i) { y[i] = x[i] * a; }); break;
        case UnaryOp::RSubScalar: map_n(n, [=](int64_t i) { y[i] = a - x[i]; }); break;
        case UnaryOp::Clamp:
            map_n(n, [=](int64_t i) { const float v = x[i], lo = v < a ? a : v; y[i] = lo > b ? b : lo; });
            break;
    }
}

void CpuBackend::unary_backward(UnaryOp op, const float* x, const float* y, const float* gy, float* gx, int64_t n,
                                float a, float b) {
    switch (op) {
        case UnaryOp::Neg: map_n(n, [=](int64_t i) { gx[i] = -gy[i]; }); break;
        case UnaryOp::Exp: map_n(n, [=](int64_t i) { gx[i] = gy[i] * y[i]; }); break;
        case UnaryOp::Log: map_n(n, [=](int64_t i) { gx[i] = gy[i] / x[i]; }); break;
        case UnaryOp::Square: map_n(n, [=](int64_t i) { gx[i] = 2.f * x[i] * gy[i]; }); break;
        case UnaryOp::Sqrt: map_n(n, [=](int64_t i) { gx[i] = gy[i] * 0.5f / y[i]; }); break;
        case UnaryOp::Abs: map_n(n, [=](int64_t i) { gx[i] = gy[i] * sign_of(x[i]); }); break;
        case UnaryOp::Sign: map_n(n, [=](int64_t i) { gx[i] = 0.f; }); break;
        // PyTorch's threshold_backward (x <= 0 ? 0 : g): at a NaN input the gradient passes; leaky ReLU's takes the
        // slope and clamp's is 0 there (checked against torch 1.13).
        case UnaryOp::Relu: map_n(n, [=](int64_t i) { const float g = gy[i]; gx[i] = x[i] <= 0 ? 0.f : g; }); break;
        case UnaryOp::LeakyRelu: map_n(n, [=](int64_t i) { const float g = gy[i]; gx[i] = x[i] > 0 ? g : a * g; }); break;
        case UnaryOp::Sigmoid: map_n(n, [=](int64_t i) { gx[i] = gy[i] * y[i] * (1.f - y[i]); }); break;
        case UnaryOp::Tanh: map_n(n, [=](int64_t i) { gx[i] = gy[i] * (1.f - y[i] * y[i]); }); break;
        // d/dx x s(x) = s(x) (1 + x (1 - s(x))), from the input: s is recomputed rather than kept.
        case UnaryOp::Silu:
            map_n(n, [=](int64_t i) { const float s = sigmoid(x[i]); gx[i] = gy[i] * (s * (1.f + x[i] * (1.f - s))); });
            break;
        case UnaryOp::Pow: map_n(n, [=](int64_t i) { gx[i] = gy[i] * a * std::pow(x[i], a - 1.f); }); break;
        case UnaryOp::AddScalar: map_n(n, [=](int64_t i) { gx[i] = gy[i]; }); break;
        case UnaryOp::MulScalar: map_n(n, [=](int64_t i) { gx[i] = gy[i] * a; }); break;
        case UnaryOp::RSubScalar: map_n(n, [=](int64_t i) { gx[i] = -gy[i]; }); break;
        // The gradient passes where the input lies inside [a, b] (ties included, as in PyTorch).
        case UnaryOp::Clamp: map_n(n, [=](int64_t i) { const float g = gy[i], v = x[i]; gx[i] = (v >= a && v <= b) ? g : 0.f; }); break;
    }
}

void CpuBackend::binary(BinaryOp op, const float* a, const float* b, float* y, const BroadcastIndex& bi) {
    switch (op) {
        case BinaryOp::Add: binary_rows(a, b, y, bi, [](float u, float v) { return u + v; }); break;
        case BinaryOp::Sub: binary_rows(a, b, y, bi, [](float u, float v) { return u - v; }); break;
        case BinaryOp::Mul: binary_rows(a, b, y, bi, [](float u, float v) { return u * v; }); break;
        case BinaryOp::Div: binary_rows(a, b, y, bi, [](float u, float v) { return u / v; }); break;
        case BinaryOp::Min: binary_rows(a, b, y, bi, [](float u, float v) { return std::fmin(u, v); }); break;
        case BinaryOp::Max: binary_rows(a, b, y, bi, [](float u, float v) { return std::fmax(u, v); }); break;
        case BinaryOp::Greater: binary_rows(a, b, y, bi, [](float u, float v) { return u > v ? 1.f : 0.f; }); break;
        case BinaryOp::GreaterEqual: binary_rows(a, b, y, bi, [](float u, float v) { return u >= v ? 1.f : 0.f; }); break;
    }
}

void CpuBackend::binary_backward(BinaryOp op, const float* a, const float* b, const float* gy, float* ga, float* gb,
                                 const BroadcastIndex& bi) {
    for_each_row(bi, true, [&](int64_t yo, int64_t ao, int64_t bo, int64_t len, int64_t as, int64_t bs) {
        for (int64_t j = 0; j < len; ++j) {
            const float u = a[ao + j * as], v = b[bo + j * bs], g = gy[yo + j];
            float du = 0, dv = 0;
            switch (op) {
                case BinaryOp::Add: du = g; dv = g; break;
                case BinaryOp::Sub: du = g; dv = -g; break;
                case BinaryOp::Mul: du = g * v; dv = g * u; break;
                case BinaryOp::Div: du = g / v; dv = -g * u / (v * v); break;
                // Ties send the gradient to a, as PyTorch's minimum/maximum split it evenly would not be a
                // subgradient choice we need; the projection in attacks never depends on it.
                case BinaryOp::Min: (u <= v ? du : dv) = g; break;
                case BinaryOp::Max: (u >= v ? du : dv) = g; break;
                case BinaryOp::Greater: case BinaryOp::GreaterEqual: break;  // piecewise constant
            }
            if (ga) ga[yo + j] = du;
            if (gb) gb[yo + j] = dv;
        }
    });
}

void CpuBackend::sum_to(const float* x, float* y, const BroadcastIndex& bi, int64_t y_numel) {
    // Different output rows may land on the same y element. Large inputs are cut into a fixed number of groups of
    // consecutive rows (never the thread count: the sums would round differently on another machine); each group
    // sums into its own copy of y when y is small (the usual case: bias or per-channel gradients), and the copies
    // are added in group order.
    const int64_t total = bi.numel();
    const int nd = bi.ndim;
    const int64_t len = nd ? bi.out_shape[nd - 1] : 1;
    const int64_t rows = len ? total / len : 0;
    const int64_t groups = total > kParallelGrain && y_numel * kSumToGroups <= (int64_t(1) << 22)
                               ? std::min<int64_t>(rows, kSumToGroups) : 1;
    if (groups <= 1 || nd == 0) {
        fill(y, 0.f, y_numel);
        for_each_row(bi, false, [&](int64_t xo, int64_t yo, int64_t, int64_t len, int64_t ys, int64_t) {
            if (ys == 0) {
                double s = 0;
                for (int64_t j = 0; j < len; ++j) s += x[xo + j];
                y[yo] += static_cast<float>(s);
            } else {
                for (int64_t j = 0; j < len; ++j) y[yo + j * ys] += x[xo + j];
            }
        });
        return;
    }
    std::vector<float> partial(static_cast<size_t>(y_numel * groups), 0.f);
    const int64_t ys = bi.a_stride[nd - 1];
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t grp = 0; grp < groups; ++grp) {
        float* mine = partial.data() + grp * y_numel;
        for (int64_t r = part_begin(grp, groups, rows); r < part_begin(grp + 1, groups, rows); ++r) {
            int64_t rem = r, yo = 0;
            for (int d = nd - 2; d >= 0; --d) {
                yo += (rem % bi.out_shape[d]) * bi.a_stride[d];
                rem /= bi.out_shape[d];
            }
            const float* px = x + r * len;
            if (ys == 0) {
                float s = 0;
                for (int64_t j = 0; j < len; ++j) s += px[j];
                mine[yo] += s;
            } else {
                for (int64_t j = 0; j < len; ++j) mine[yo + j * ys] += px[j];
            }
        }
    }
    for (int64_t i = 0; i < y_numel; ++i) {
        float s = 0;
        for (int64_t grp = 0; grp < groups; ++grp) s += partial[static_cast<size_t>(grp * y_numel + i)];
        y[i] = s;
    }
}

void CpuBackend::axpy(float alpha, const float* x, float* y, int64_t n) {
    map_n(n, [=](int64_t i) { y[i] += alpha * x[i]; });
}

void CpuBackend::masked_scale(const float* x, const float* mask, float* y, int64_t n, float scale) {
    map_n(n, [=](int64_t i) { y[i] = x[i] * mask[i] * scale; });
}

}  // namespace cw
