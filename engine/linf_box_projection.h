#pragma once
// The geometric core of FAB (docs/protocols/attacks.md §5): the smallest L∞ step from a point in the box onto a hyperplane,
// staying in the box.
//
//   minimise ||d||_∞  subject to  ⟨w, p + d⟩ = b,  p + d ∈ [0,1]^n
//
// Derivation (ours): let r = b − ⟨w, p⟩. Coordinate j helps most by moving in direction σ_j = sign(w_j·r), and it
// has room u_j in that direction (1 − p_j upwards, p_j downwards). With a radius λ the largest reachable change
// of ⟨w, ·⟩ is g(λ) = Σ_j |w_j|·min(λ, u_j): increasing, piecewise linear, with kinks at the u_j. The optimum is
// the smallest λ* with g(λ*) = |r|; then d_j = σ_j·min(λ*, u_j) (attack_math::fab_coordinate). If even g(∞) < |r|
// the hyperplane lies outside the box and d moves every coordinate to its box end (the closest the box gets).
//
// Below the first kink not yet passed, g(λ) = reached + λ·W, where `reached` sums |w_j|·u_j over the kinks passed
// (those with g(u_j) < |r|) and W sums |w_j| over the rest; so λ* = (|r| − reached)/W. The CPU walks the kinks in
// increasing order; the CUDA kernel finds the same set of passed kinks by bisection (engine/cuda/fab_kernels.cu).
#include <cstdint>
#include <vector>

namespace cw {

struct LinfKink {   // working memory: a coordinate's room and index
    float u;
    int32_t j;
};

// The radius λ* for point p (∞ when the hyperplane is out of the box's reach); r_up receives sign(r) > 0.
// `scratch` is reused between calls to avoid allocations.
double linf_box_radius(const float* p, const float* w, double b, int64_t n, bool& r_up, std::vector<LinfKink>& scratch);

// Writes d (n values) for point p; returns ||d||_∞.
float linf_box_projection(const float* p, const float* w, double b, int64_t n, float* d,
                          std::vector<LinfKink>& scratch);

}  // namespace cw
