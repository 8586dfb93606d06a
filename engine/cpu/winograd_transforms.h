// The transforms of Winograd F(2x2, 3x3) (Lavin & Gray 2015), one plane or one row of filters at a time, with
// 16 transform-domain positions xi = 4 * row + column written or read at `stride` floats apart:
//   filters  U  = G g G^T          G   = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]
//   inputs   V  = B^T d B          B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   outputs  Y  = A^T M A          A^T = [1 1 1 0; 0 1 -1 -1]
// and the transposes the gradients need: dM = A dY A^T (output gradients into the transform domain) and
// dg = G^T dU G (filter gradients back out of it).
#pragma once

#include <cstdint>

namespace cw::winograd {

constexpr int64_t kPlanes = 16;

// u[xi][out][in] from w[k][c][3][3]. Forward: out = k, in = c. Backward data: out = c, in = k, each filter rotated
// by 180 degrees.
void transform_filters(const float* w, float* u, int64_t k, int64_t c, bool backward_data);

// gw[k][c][3][3] (+)= G^T du[xi][k][c] G.
void filter_gradients_from_transform(const float* du, float* gw, int64_t k, int64_t c, bool accumulate);

// One h x w plane into the (2*th + 2) x (2*tw + 2) zero-padded grid of overlapping 4x4 tiles.
void pad_plane(const float* x, int64_t h, int64_t w, int64_t pad, int64_t th, int64_t tw, float* padded);

// V for every tile of a padded plane: v[xi * stride + ty * tw + tx]. `rows`: scratch of 4 * (2*tw + 2) floats.
void input_transform_plane(const float* padded, int64_t th, int64_t tw, float* v, int64_t stride, float* rows);

// Y for every tile of one output plane from m[xi * stride + ty * tw + tx]; rows and columns past oh x ow (odd
// sizes) are dropped. `rows`: scratch of 12 * tw floats.
void output_transform_plane(const float* m, int64_t stride, int64_t th, int64_t tw, float* y, int64_t oh,
                            int64_t ow, float* rows);

// dM = A dY A^T for every 2x2 tile of one oh x ow gradient plane (zero past the edge): dm[xi * stride + t].
// `rows`: scratch of 12 * tw floats.
void output_gradient_transform_plane(const float* gy, int64_t oh, int64_t ow, int64_t th, int64_t tw, float* dm,
                                     int64_t stride, float* rows);

}  // namespace cw::winograd
