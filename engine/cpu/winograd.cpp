// Winograd F(2x2, 3x3) convolution (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015) for
// 3x3 stride-1 convolutions, the bulk of every ResNet. In the transform domain (engine/cpu/winograd_transforms.h)
// a convolution is 16 independent channel GEMMs with 2.25x fewer multiplies than im2col:
//   forward          M[xi] = U[xi] V[xi]        (k x c)(c x tiles), then Y = A^T M A per tile
//   backward data    the same on gy, with the filters rotated and in/out channels swapped
//   backward filter  dU[xi] = dM[xi] V[xi]^T    (k x tiles)(tiles x c), summed over tiles, then dg = G^T dU G
//
// Work is split into blocks of whole images that one thread carries from the input transform through the GEMMs
// to the output transform, so the transformed tiles stay in that core's cache and no barrier separates phases.
#include "engine/cpu/winograd.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "engine/cpu/ordered_sum.h"
#include "engine/cpu/scratch.h"
#include "engine/cpu/winograd_transforms.h"

namespace cw::winograd {

namespace {

// Measured on the 2-core machine with the ResNet-18 shapes (32..1024 tried): small blocks keep a block's
// transformed tiles in L2. A block is never less than one image.
constexpr int64_t kTargetTilesPerBlock = 64;

// One convolution as the transform sees it: `cin` planes of h x w, zero-padded by `pad`, into `cout` planes of
// oh x ow (3x3 kernel, stride 1).
struct Problem {
    int64_t n, cin, h, w, cout, pad, oh, ow;
    int64_t tiles_h() const { return (oh + 1) / 2; }
    int64_t tiles_w() const { return (ow + 1) / 2; }
    int64_t tiles() const { return tiles_h() * tiles_w(); }
};

// Images [n0, n0 + nb) of one block, cols = nb * tiles GEMM columns.
struct Block {
    int64_t n0, nb, cols;
};

// At least this many blocks when the batch allows, so that every thread gets work; a constant, not the thread
// count, because the filter gradient's sums follow the blocks and must round the same on every machine.
constexpr int64_t kMinBlocks = 8;

// The filter gradient sums its blocks into at most this many partial sums (each 16 * k * c floats, capped in
// total by kFilterSumFloats), added in order at the end.
constexpr int64_t kMaxFilterSums = 8;
constexpr int64_t kFilterSumFloats = int64_t(16) << 20;

// The batch in blocks of whole images.
struct ImageBlocks {
    int64_t per_block, count;
    Block at(int64_t b, const Problem& p) const {
        const int64_t n0 = b * per_block, nb = std::min(per_block, p.n - n0);
        return {n0, nb, nb * p.tiles()};
    }
    ImageBlocks(const Problem& p, int64_t target_tiles) {
        per_block = std::max<int64_t>(1, target_tiles / p.tiles());
        per_block = std::min(per_block, std::max<int64_t>(1, (p.n + kMinBlocks - 1) / kMinBlocks));
        count = (p.n + per_block - 1) / per_block;
    }
};

struct Workspace {
    std::vector<float> v, m, padded, rows;
};
thread_local Workspace t_ws;
thread_local std::vector<float> t_filters, t_filter_sums;

// V for the block's images of `in`, v[xi][c][nn * tiles + t], in the thread's workspace.
float* transform_inputs(const float* in, const Problem& p, const Block& blk, Workspace& ws) {
    const int64_t th = p.tiles_h(), tw = p.tiles_w(), n0 = blk.n0, nb = blk.nb, cols = blk.cols;
    float* v = grown(ws.v, kPlanes * p.cin * cols);
    float* padded = grown(ws.padded, (2 * th + 2) * (2 * tw + 2));
    float* rows = grown(ws.rows, std::max(4 * (2 * tw + 2), 12 * tw));
    for (int64_t nn = 0; nn < nb; ++nn)
        for (int64_t c = 0; c < p.cin; ++c) {
            pad_plane(in + ((n0 + nn) * p.cin + c) * p.h * p.w, p.h, p.w, p.pad, th, tw, padded);
            input_transform_plane(padded, th, tw, v + c * cols + nn * p.tiles(), p.cin * cols, rows);
        }
    return v;
}

// Inside a parallel region OpenBLAS (OpenMP build) runs a GEMM on the calling thread.
void gemm(bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float beta, float* c) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), 1.f, a, static_cast<int>(k), b,
                static_cast<int>(trans_b ? k : n), beta, c, static_cast<int>(n));
}

void convolve(const float* in, const float* u, float* out, const Problem& p) {
    const int64_t tiles = p.tiles();
    const ImageBlocks blocks(p, kTargetTilesPerBlock);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < blocks.count; ++b) {
        const Block blk = blocks.at(b, p);
        const int64_t n0 = blk.n0, nb = blk.nb, cols = blk.cols;
        Workspace& ws = t_ws;
        const float* v = transform_inputs(in, p, blk, ws);
        float* m = grown(ws.m, kPlanes * p.cout * cols);
        for (int64_t xi = 0; xi < kPlanes; ++xi)
            gemm(false, p.cout, cols, p.cin, u + xi * p.cout * p.cin, v + xi * p.cin * cols, 0.f,
                 m + xi * p.cout * cols);
        float* rows = grown(ws.rows, 12 * p.tiles_w());
        for (int64_t nn = 0; nn < nb; ++nn)
            for (int64_t k = 0; k < p.cout; ++k)
                output_transform_plane(m + k * cols + nn * tiles, p.cout * cols, p.tiles_h(), p.tiles_w(),
                                       out + ((n0 + nn) * p.cout + k) * p.oh * p.ow, p.oh, p.ow, rows);
    }
}

}  // namespace

bool applicable(const ConvGeometry& g) {
    // Few channels make the 16 GEMMs too thin to repay the transforms (a network's first layer, say).
    return g.r == 3 && g.s == 3 && g.stride == 1 && g.pad <= 2 && g.c >= 16 && g.k >= 16;
}

void forward(const float* x, const float* w, float* y, const ConvGeometry& g) {
    float* u = grown(t_filters, kPlanes * g.k * g.c);
    transform_filters(w, u, g.k, g.c, false);
    convolve(x, u, y, {g.n, g.c, g.h, g.w, g.k, g.pad, g.out_h(), g.out_w()});
}

void backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g) {
    float* u = grown(t_filters, kPlanes * g.k * g.c);
    transform_filters(w, u, g.k, g.c, true);
    // A full correlation of gy with the rotated filters: padding 2 - pad brings oh x ow back to h x w.
    convolve(gy, u, gx, {g.n, g.k, g.out_h(), g.out_w(), g.c, 2 - g.pad, g.h, g.w});
}

void backward_filter(const float* x, const float* gy, float* gw, const ConvGeometry& g, bool accumulate) {
    const Problem p{g.n, g.c, g.h, g.w, g.k, g.pad, g.out_h(), g.out_w()};
    const int64_t tiles = p.tiles(), du_size = kPlanes * g.k * g.c;
    const ImageBlocks blocks(p, kTargetTilesPerBlock);
    // Consecutive blocks are summed into one of `sums` partial dU (a power of two, so common thread counts share
    // them evenly), which are added in order: the rounding depends on the problem only, never on the threads.
    int64_t sums = std::max<int64_t>(1, std::min({kMaxFilterSums, blocks.count, kFilterSumFloats / du_size}));
    while (sums & (sums - 1)) sums &= sums - 1;
    float* du = grown(t_filter_sums, sums * du_size);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t part = 0; part < sums; ++part) {
        float* mine = du + part * du_size;
        const int64_t first_block = part_begin(part, sums, blocks.count), end_block = part_begin(part + 1, sums, blocks.count);
        for (int64_t b = first_block; b < end_block; ++b) {
            const Block blk = blocks.at(b, p);
            const int64_t n0 = blk.n0, nb = blk.nb, cols = blk.cols;
            Workspace& ws = t_ws;
            const float* v = transform_inputs(x, p, blk, ws);
            float* dm = grown(ws.m, kPlanes * p.cout * cols);
            float* rows = grown(ws.rows, 12 * p.tiles_w());
            for (int64_t nn = 0; nn < nb; ++nn)
                for (int64_t k = 0; k < p.cout; ++k)
                    output_gradient_transform_plane(gy + ((n0 + nn) * p.cout + k) * p.oh * p.ow, p.oh, p.ow,
                                                    p.tiles_h(), p.tiles_w(), dm + k * cols + nn * tiles,
                                                    p.cout * cols, rows);
            for (int64_t xi = 0; xi < kPlanes; ++xi)
                gemm(true, p.cout, p.cin, cols, dm + xi * p.cout * cols, v + xi * p.cin * cols,
                     b == first_block ? 0.f : 1.f, mine + xi * p.cout * p.cin);
        }
        if (first_block == end_block) std::fill(mine, mine + du_size, 0.f);  // an empty batch
    }
    float* total = du;
#pragma omp parallel for schedule(static) if (du_size > (1 << 15))
    for (int64_t i = 0; i < du_size; ++i)
        for (int64_t part = 1; part < sums; ++part) total[i] += total[part * du_size + i];
    filter_gradients_from_transform(total, gw, g.k, g.c, accumulate);
}

}  // namespace cw::winograd
