// Winograd F(2x2, 3x3) convolution (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015) for
// 3x3 stride-1 convolutions, the bulk of every ResNet. Each 4x4 input tile and each 3x3 filter are mapped to 16
// transform-domain planes; there the convolution is 16 independent channel GEMMs with 2.25x fewer multiplies
// than im2col, and each 2x2 output tile is mapped back. The backward-data pass is the same computation on gy with
// the filters rotated by 180 degrees and input/output channels swapped.
//
// Work is split into blocks of whole images that one thread carries from input transform through the 16 GEMMs
// to the output transform, so the transformed tiles stay in that core's cache and no barrier separates phases.
#include "engine/cpu/winograd.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace cw::winograd {

namespace {

constexpr int64_t kPlanes = 16;             // 4x4 transform-domain positions
// Measured on the 2-core machine (ResNet-18 shapes, 32..1024 tried): small blocks keep a block's transformed tiles
// in L2; a block is never less than one image.
constexpr int64_t kTargetTilesPerBlock = 64;

// One convolution as seen by the transform: `cin` planes of h x w, zero-padded by `pad`, into `cout` planes of
// oh x ow (3x3 kernel, stride 1).
struct Problem {
    int64_t n, cin, h, w, cout, pad, oh, ow;
    int64_t tiles_h() const { return (oh + 1) / 2; }
    int64_t tiles_w() const { return (ow + 1) / 2; }
    int64_t tiles() const { return tiles_h() * tiles_w(); }
};

// U = G g G^T for a row of 3x3 filters, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]. g[t * n + i] is tap t of filter
// i; u[xi * stride + i] receives transform-domain position xi; gg is scratch for 12 rows of n. Vectorised across
// the n filters.
__attribute__((target_clones("avx512f", "avx2", "default")))
void transform_filter_row(const float* __restrict g, int64_t n, float* __restrict u, int64_t stride,
                          float* __restrict gg) {
    for (int s = 0; s < 3; ++s) {  // gg[r][s] = (G g)[r][s], rows of n
        const float* g0 = g + s * n;
        const float* g1 = g + (3 + s) * n;
        const float* g2 = g + (6 + s) * n;
        float* r0 = gg + (0 * 3 + s) * n;
        float* r1 = gg + (1 * 3 + s) * n;
        float* r2 = gg + (2 * 3 + s) * n;
        float* r3 = gg + (3 * 3 + s) * n;
        for (int64_t i = 0; i < n; ++i) {
            r0[i] = g0[i];
            r1[i] = 0.5f * (g0[i] + g1[i] + g2[i]);
            r2[i] = 0.5f * (g0[i] - g1[i] + g2[i]);
            r3[i] = g2[i];
        }
    }
    for (int r = 0; r < 4; ++r) {  // u[r][j] = (G g G^T)[r][j]
        const float* a = gg + (r * 3 + 0) * n;
        const float* b = gg + (r * 3 + 1) * n;
        const float* c = gg + (r * 3 + 2) * n;
        float* u0 = u + (r * 4 + 0) * stride;
        float* u1 = u + (r * 4 + 1) * stride;
        float* u2 = u + (r * 4 + 2) * stride;
        float* u3 = u + (r * 4 + 3) * stride;
        for (int64_t i = 0; i < n; ++i) {
            u0[i] = a[i];
            u1[i] = 0.5f * (a[i] + b[i] + c[i]);
            u2[i] = 0.5f * (a[i] - b[i] + c[i]);
            u3[i] = c[i];
        }
    }
}

thread_local std::vector<float> t_taps;

// u[xi][out][in] for the 16 planes. Forward: out = k, in = c, filter w[k][c]. Backward data: out = c, in = k,
// filter w[k][c] rotated by 180 degrees. Each output row first gathers its filters tap-major so the transform
// reads and writes contiguous runs.
void transform_filters(const float* w, float* u, int64_t k, int64_t c, bool backward_data) {
    const int64_t outs = backward_data ? c : k, ins = backward_data ? k : c, stride = outs * ins;
#pragma omp parallel for schedule(static) if (k * c > 256)
    for (int64_t o = 0; o < outs; ++o) {
        std::vector<float>& taps = t_taps;
        if (static_cast<int64_t>(taps.size()) < 21 * ins) taps.resize(static_cast<size_t>(21 * ins));
        for (int64_t i = 0; i < ins; ++i) {
            const float* src = backward_data ? w + (i * c + o) * 9 : w + (o * c + i) * 9;
            for (int t = 0; t < 9; ++t) taps[t * ins + i] = backward_data ? src[8 - t] : src[t];
        }
        transform_filter_row(taps.data(), ins, u + o * ins, stride, taps.data() + 9 * ins);
    }
}

// B^T d B for every 4x4 tile of one zero-padded input plane, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
// `padded` has (2*th + 2) rows of `pw` = 2*tw + 2 floats; v[xi * stride + ty * tw + tx]. Vertical pass first on
// whole rows (contiguous), then the horizontal pass reads columns 2tx..2tx+3.
__attribute__((target_clones("avx512f", "avx2", "default")))
void input_transform_plane(const float* __restrict padded, int64_t th, int64_t tw, float* __restrict v, int64_t stride,
                           float* __restrict rows) {
    const int64_t pw = 2 * tw + 2;
    float* w0 = rows;
    float* w1 = rows + pw;
    float* w2 = rows + 2 * pw;
    float* w3 = rows + 3 * pw;
    for (int64_t ty = 0; ty < th; ++ty) {
        const float* p0 = padded + 2 * ty * pw;
        const float* p1 = p0 + pw;
        const float* p2 = p1 + pw;
        const float* p3 = p2 + pw;
        for (int64_t x = 0; x < pw; ++x) {
            w0[x] = p0[x] - p2[x];
            w1[x] = p1[x] + p2[x];
            w2[x] = p2[x] - p1[x];
            w3[x] = p1[x] - p3[x];
        }
        const float* wr[4] = {w0, w1, w2, w3};
        for (int i = 0; i < 4; ++i) {
            const float* r = wr[i];
            float* v0 = v + (i * 4 + 0) * stride + ty * tw;
            float* v1 = v + (i * 4 + 1) * stride + ty * tw;
            float* v2 = v + (i * 4 + 2) * stride + ty * tw;
            float* v3 = v + (i * 4 + 3) * stride + ty * tw;
            for (int64_t tx = 0; tx < tw; ++tx) {
                const float a = r[2 * tx], b = r[2 * tx + 1], c = r[2 * tx + 2], d = r[2 * tx + 3];
                v0[tx] = a - c;
                v1[tx] = b + c;
                v2[tx] = c - b;
                v3[tx] = b - d;
            }
        }
    }
}

// A^T m A for every tile of one output plane, A^T = [1 1 1 0; 0 1 -1 -1]; m[xi * stride + ty * tw + tx].
// Rows and columns past oh x ow (odd sizes) are computed and dropped.
__attribute__((target_clones("avx512f", "avx2", "default")))
void output_transform_plane(const float* __restrict m, int64_t stride, int64_t th, int64_t tw, float* __restrict y, int64_t oh,
                            int64_t ow, float* __restrict rows) {
    float* s = rows;             // s[a][j][tx]: vertical pass, a = output row in the tile, j = tile column
    float* out = rows + 8 * tw;  // two output rows of 2*tw
    for (int64_t ty = 0; ty < th; ++ty) {
        for (int j = 0; j < 4; ++j) {
            const float* m0 = m + (0 * 4 + j) * stride + ty * tw;
            const float* m1 = m + (1 * 4 + j) * stride + ty * tw;
            const float* m2 = m + (2 * 4 + j) * stride + ty * tw;
            const float* m3 = m + (3 * 4 + j) * stride + ty * tw;
            float* s0 = s + j * tw;
            float* s1 = s + (4 + j) * tw;
            for (int64_t tx = 0; tx < tw; ++tx) {
                s0[tx] = m0[tx] + m1[tx] + m2[tx];
                s1[tx] = m1[tx] - m2[tx] - m3[tx];
            }
        }
        for (int a = 0; a < 2; ++a) {
            const float* q = s + a * 4 * tw;
            float* o = out + a * 2 * tw;
            for (int64_t tx = 0; tx < tw; ++tx) {
                const float q0 = q[tx], q1 = q[tw + tx], q2 = q[2 * tw + tx], q3 = q[3 * tw + tx];
                o[2 * tx] = q0 + q1 + q2;
                o[2 * tx + 1] = q1 - q2 - q3;
            }
        }
        const int64_t y0 = 2 * ty;
        std::memcpy(y + y0 * ow, out, sizeof(float) * ow);
        if (y0 + 1 < oh) std::memcpy(y + (y0 + 1) * ow, out + 2 * tw, sizeof(float) * ow);
    }
}

// Copies one h x w plane into the (2*th + 2) x (2*tw + 2) zero-padded tile grid.
void pad_plane(const float* x, const Problem& p, float* padded) {
    const int64_t ph = 2 * p.tiles_h() + 2, pw = 2 * p.tiles_w() + 2;
    std::memset(padded, 0, sizeof(float) * ph * pw);
    const int64_t x_lo = std::max<int64_t>(0, -p.pad), x_hi = std::min(p.w, pw - p.pad);
    if (x_hi <= x_lo) return;
    for (int64_t r = 0; r < ph; ++r) {
        const int64_t src_row = r - p.pad;
        if (src_row < 0 || src_row >= p.h) continue;
        std::memcpy(padded + r * pw + x_lo + p.pad, x + src_row * p.w + x_lo, sizeof(float) * (x_hi - x_lo));
    }
}

struct Workspace {
    std::vector<float> v, m, padded, rows;
    float* ensure(std::vector<float>& b, int64_t n) {
        if (static_cast<int64_t>(b.size()) < n) b.resize(static_cast<size_t>(n));
        return b.data();
    }
};
thread_local Workspace t_ws;
thread_local std::vector<float> t_filters;

void convolve(const float* in, const float* u, float* out, const Problem& p) {
    const int64_t tiles = p.tiles(), th = p.tiles_h(), tw = p.tiles_w();
    const int64_t threads = omp_get_max_threads();
    // Whole images per block, about kTargetTilesPerBlock tiles, and at least one block per thread.
    int64_t per_block = std::max<int64_t>(1, kTargetTilesPerBlock / tiles);
    per_block = std::min(per_block, std::max<int64_t>(1, (p.n + threads - 1) / threads));
    const int64_t blocks = (p.n + per_block - 1) / per_block;
    const int64_t in_plane = p.h * p.w, out_plane = p.oh * p.ow;

#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < blocks; ++b) {
        const int64_t n0 = b * per_block, nb = std::min(per_block, p.n - n0), cols = nb * tiles;
        Workspace& ws = t_ws;
        float* v = ws.ensure(ws.v, kPlanes * p.cin * cols);
        float* m = ws.ensure(ws.m, kPlanes * p.cout * cols);
        float* padded = ws.ensure(ws.padded, (2 * th + 2) * (2 * tw + 2));
        float* rows = ws.ensure(ws.rows, std::max(4 * (2 * tw + 2), 12 * tw));
        for (int64_t nn = 0; nn < nb; ++nn)
            for (int64_t c = 0; c < p.cin; ++c) {
                pad_plane(in + ((n0 + nn) * p.cin + c) * in_plane, p, padded);
                input_transform_plane(padded, th, tw, v + c * cols + nn * tiles, p.cin * cols, rows);
            }
        // Inside this parallel region OpenBLAS (OpenMP build) runs each GEMM on the calling thread.
        for (int64_t xi = 0; xi < kPlanes; ++xi)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(p.cout), static_cast<int>(cols),
                        static_cast<int>(p.cin), 1.f, u + xi * p.cout * p.cin, static_cast<int>(p.cin),
                        v + xi * p.cin * cols, static_cast<int>(cols), 0.f, m + xi * p.cout * cols,
                        static_cast<int>(cols));
        for (int64_t nn = 0; nn < nb; ++nn)
            for (int64_t k = 0; k < p.cout; ++k)
                output_transform_plane(m + k * cols + nn * tiles, p.cout * cols, th, tw,
                                       out + ((n0 + nn) * p.cout + k) * out_plane, p.oh, p.ow, rows);
    }
}

}  // namespace

bool applicable(const ConvGeometry& g) {
    // Few channels make the 16 GEMMs too thin to repay the transforms (a network's first layer, say).
    return g.r == 3 && g.s == 3 && g.stride == 1 && g.pad <= 2 && g.c >= 16 && g.k >= 16;
}

void forward(const float* x, const float* w, float* y, const ConvGeometry& g) {
    std::vector<float>& u = t_filters;
    u.resize(static_cast<size_t>(kPlanes * g.k * g.c));
    transform_filters(w, u.data(), g.k, g.c, false);
    convolve(x, u.data(), y, {g.n, g.c, g.h, g.w, g.k, g.pad, g.out_h(), g.out_w()});
}

void backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g) {
    std::vector<float>& u = t_filters;
    u.resize(static_cast<size_t>(kPlanes * g.k * g.c));
    transform_filters(w, u.data(), g.k, g.c, true);
    // A full correlation of gy with the rotated filters: padding 2 - pad brings oh x ow back to h x w.
    convolve(gy, u.data(), gx, {g.n, g.k, g.out_h(), g.out_w(), g.c, 2 - g.pad, g.h, g.w});
}

}  // namespace cw::winograd
