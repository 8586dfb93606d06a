// Winograd F(2x2, 3x3) transforms. Each loop runs across filters or tiles so that it vectorises.
#include "engine/cpu/winograd_transforms.h"

#include "engine/cpu/scratch.h"
#include "engine/cpu/vector_clones.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace cw::winograd {

namespace {

// U = G g G^T for a row of n filters: g[t * n + i] is tap t of filter i, u[xi * stride + i]; gg: 12 rows of n.
CW_VECTOR_CLONES
void transform_filter_row(const float* __restrict g, int64_t n, float* __restrict u, int64_t stride,
                          float* __restrict gg) {
    for (int s = 0; s < 3; ++s) {  // gg[r][s] = (G g)[r][s]
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

// dg = G^T du G for a row of n filters: du[xi * stride + i] in, dg[t * n + i] out; x: 12 rows of n.
CW_VECTOR_CLONES
void filter_gradient_row(const float* __restrict du, int64_t stride, int64_t n, float* __restrict dg,
                         float* __restrict x) {
    for (int j = 0; j < 4; ++j) {  // x[r][j] = (G^T du)[r][j]
        const float* d0 = du + (0 * 4 + j) * stride;
        const float* d1 = du + (1 * 4 + j) * stride;
        const float* d2 = du + (2 * 4 + j) * stride;
        const float* d3 = du + (3 * 4 + j) * stride;
        float* x0 = x + (0 * 4 + j) * n;
        float* x1 = x + (1 * 4 + j) * n;
        float* x2 = x + (2 * 4 + j) * n;
        for (int64_t i = 0; i < n; ++i) {
            x0[i] = d0[i] + 0.5f * (d1[i] + d2[i]);
            x1[i] = 0.5f * (d1[i] - d2[i]);
            x2[i] = 0.5f * (d1[i] + d2[i]) + d3[i];
        }
    }
    for (int r = 0; r < 3; ++r) {  // dg[r][s] = (G^T du G)[r][s]
        const float* a = x + (r * 4 + 0) * n;
        const float* b = x + (r * 4 + 1) * n;
        const float* c = x + (r * 4 + 2) * n;
        const float* d = x + (r * 4 + 3) * n;
        float* o0 = dg + (r * 3 + 0) * n;
        float* o1 = dg + (r * 3 + 1) * n;
        float* o2 = dg + (r * 3 + 2) * n;
        for (int64_t i = 0; i < n; ++i) {
            o0[i] = a[i] + 0.5f * (b[i] + c[i]);
            o1[i] = 0.5f * (b[i] - c[i]);
            o2[i] = 0.5f * (b[i] + c[i]) + d[i];
        }
    }
}

thread_local std::vector<float> t_scratch;

}  // namespace

void transform_filters(const float* w, float* u, int64_t k, int64_t c, bool backward_data) {
    const int64_t outs = backward_data ? c : k, ins = backward_data ? k : c, stride = outs * ins;
    // Each output row gathers its filters tap-major first, so the transform reads and writes contiguous runs.
#pragma omp parallel for schedule(static) if (k * c > 256)
    for (int64_t o = 0; o < outs; ++o) {
        float* taps = grown(t_scratch, 21 * ins);
        for (int64_t i = 0; i < ins; ++i) {
            const float* src = backward_data ? w + (i * c + o) * 9 : w + (o * c + i) * 9;
            for (int t = 0; t < 9; ++t) taps[t * ins + i] = backward_data ? src[8 - t] : src[t];
        }
        transform_filter_row(taps, ins, u + o * ins, stride, taps + 9 * ins);
    }
}

void filter_gradients_from_transform(const float* du, float* gw, int64_t k, int64_t c, bool accumulate) {
#pragma omp parallel for schedule(static) if (k * c > 256)
    for (int64_t kk = 0; kk < k; ++kk) {
        float* taps = grown(t_scratch, 21 * c);
        filter_gradient_row(du + kk * c, k * c, c, taps, taps + 9 * c);
        float* dst = gw + kk * c * 9;
        for (int64_t i = 0; i < c; ++i)
            for (int t = 0; t < 9; ++t) dst[i * 9 + t] = (accumulate ? dst[i * 9 + t] : 0.f) + taps[t * c + i];
    }
}

void pad_plane(const float* x, int64_t h, int64_t w, int64_t pad, int64_t th, int64_t tw, float* padded) {
    const int64_t ph = 2 * th + 2, pw = 2 * tw + 2;
    std::memset(padded, 0, sizeof(float) * ph * pw);
    const int64_t cols = std::min(w, pw - pad);
    if (cols <= 0) return;
    for (int64_t r = std::max<int64_t>(0, pad); r < std::min(ph, h + pad); ++r)
        std::memcpy(padded + r * pw + pad, x + (r - pad) * w, sizeof(float) * cols);
}

// Vertical pass first on whole padded rows (contiguous), then the horizontal pass reads columns 2tx..2tx+3.
CW_VECTOR_CLONES
void input_transform_plane(const float* __restrict padded, int64_t th, int64_t tw, float* __restrict v,
                           int64_t stride, float* __restrict rows) {
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

CW_VECTOR_CLONES
void output_transform_plane(const float* __restrict m, int64_t stride, int64_t th, int64_t tw, float* __restrict y,
                            int64_t oh, int64_t ow, float* __restrict rows) {
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

// Vertical pass on the tile's two gradient rows (e_i = (A dY)[i], contiguous), then the horizontal pass pairs
// columns 2tx, 2tx+1.
CW_VECTOR_CLONES
void output_gradient_transform_plane(const float* __restrict gy, int64_t oh, int64_t ow, int64_t th, int64_t tw,
                                     float* __restrict dm, int64_t stride, float* __restrict rows) {
    const int64_t width = 2 * tw;
    float* r0 = rows;
    float* r1 = rows + width;
    float* e = rows + 2 * width;  // e[i][x], 4 rows of width
    for (int64_t ty = 0; ty < th; ++ty) {
        const int64_t y0 = 2 * ty;
        std::memcpy(r0, gy + y0 * ow, sizeof(float) * ow);
        if (y0 + 1 < oh) std::memcpy(r1, gy + (y0 + 1) * ow, sizeof(float) * ow);
        else std::fill(r1, r1 + ow, 0.f);
        if (ow < width) r0[ow] = r1[ow] = 0.f;  // odd width: the last tile's second column lies past the edge
        for (int64_t x = 0; x < width; ++x) {
            e[x] = r0[x];
            e[width + x] = r0[x] + r1[x];
            e[2 * width + x] = r0[x] - r1[x];
            e[3 * width + x] = -r1[x];
        }
        for (int i = 0; i < 4; ++i) {
            const float* q = e + i * width;
            float* d0 = dm + (i * 4 + 0) * stride + ty * tw;
            float* d1 = dm + (i * 4 + 1) * stride + ty * tw;
            float* d2 = dm + (i * 4 + 2) * stride + ty * tw;
            float* d3 = dm + (i * 4 + 3) * stride + ty * tw;
            for (int64_t tx = 0; tx < tw; ++tx) {
                const float a = q[2 * tx], b = q[2 * tx + 1];
                d0[tx] = a;
                d1[tx] = a + b;
                d2[tx] = a - b;
                d3[tx] = -b;
            }
        }
    }
}

}  // namespace cw::winograd
