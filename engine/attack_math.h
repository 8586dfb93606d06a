#pragma once
// The arithmetic of one attack step, as plain functions compiled for both the host and the GPU, so the CPU
// backend, the CUDA backend and the host-side attacks (Square, FAB) evaluate literally the same formulas
// (docs/protocols/attacks.md §0–§5). Nothing here allocates or touches memory other than through its arguments.
//
// Objectives are per-sample functions of one row of logits z (C classes) that the attacks MAXIMISE; each returns
// its value and, when dz is not null, writes dvalue/dz (C floats). Ties between logits go to the lower index.
#include <cmath>
#include <cstdint>

#include "engine/backend.h"
#include "engine/host_device.h"


namespace cw::attack_math {

// sign with sign(0) = 0 (and sign(NaN) = 0: a NaN gradient component does not move the point)
CW_HD float sgn(float v) { return static_cast<float>((v > 0.f) - (v < 0.f)); }
CW_HD float clamp01(float v) { return fminf(fmaxf(v, 0.f), 1.f); }

// argmax with the lowest index winning ties (the engine's argmax convention).
CW_HD int32_t argmax_row(const float* z, int64_t C) {
    int32_t best = 0;
    for (int32_t j = 1; j < C; ++j)
        if (z[j] > z[best]) best = j;
    return best;
}

// max_{j≠y} z_j's index (lowest on ties).
CW_HD int32_t best_other(const float* z, int64_t C, int32_t y) {
    int32_t best = -1;
    for (int32_t j = 0; j < C; ++j)
        if (j != y && (best < 0 || z[j] > z[best])) best = j;
    return best;
}

// The k (≤ 4) largest logits' indices, largest first (ties: lower index first).
constexpr int kMaxTop = 4;
CW_HD void top_classes(const float* z, int64_t C, int k, int32_t* top) {
    for (int r = 0; r < k; ++r) {
        int32_t best = -1;
        for (int32_t j = 0; j < C; ++j) {
            bool taken = false;
            for (int q = 0; q < r; ++q) taken = taken || top[q] == j;
            if (!taken && (best < 0 || z[j] > z[best])) best = j;
        }
        top[r] = best;
    }
}

CW_HD void zero_row(float* dz, int64_t C) {
    if (dz)
        for (int64_t j = 0; j < C; ++j) dz[j] = 0.f;
}

// CE(z, y) = −z_y + log Σ_j exp(z_j), in double (the attacks' loss values decide step-size schedules).
CW_HD float cross_entropy(const float* z, int64_t C, int32_t y, float* dz) {
    float zmax = z[0];
    for (int64_t j = 1; j < C; ++j) zmax = fmaxf(zmax, z[j]);
    double s = 0;
    for (int64_t j = 0; j < C; ++j) s += ::exp(static_cast<double>(z[j] - zmax));
    const double lse = zmax + ::log(s);
    if (dz) {
        for (int64_t j = 0; j < C; ++j) dz[j] = static_cast<float>(::exp(z[j] - lse));
        dz[y] -= 1.f;
    }
    return static_cast<float>(lse - z[y]);
}

// −max(z_y − max_{j≠y} z_j + κ, 0) (docs/protocols/attacks.md §3); no gradient once the margin is below −κ.
CW_HD float cw_objective(const float* z, int64_t C, int32_t y, float kappa, float* dz) {
    const int32_t o = best_other(z, C, y);
    const float m = z[y] - z[o];
    zero_row(dz, C);
    if (m + kappa <= 0.f) return 0.f;
    if (dz) {
        dz[y] = -1.f;
        dz[o] = 1.f;
    }
    return -(m + kappa);
}

// z_t − max_{j≠t} z_j (docs/protocols/attacks.md §2.3).
CW_HD float targeted_margin(const float* z, int64_t C, int32_t t, float* dz) {
    const int32_t o = best_other(z, C, t);
    zero_row(dz, C);
    if (dz) {
        dz[t] = 1.f;
        dz[o] = -1.f;
    }
    return z[t] - z[o];
}

// DLR (docs/protocols/attacks.md §4.1): −(z_y − max_{j≠y} z_j) / (z_π1 − z_π3 + 1e-12); C ≥ 3.
CW_HD float dlr(const float* z, int64_t C, int32_t y, float* dz) {
    int32_t top[kMaxTop];
    top_classes(z, C, 3, top);
    const int32_t other = top[0] == y ? top[1] : top[0];
    const double num = double(z[y]) - z[other];
    const double den = double(z[top[0]]) - z[top[2]] + 1e-12;
    zero_row(dz, C);
    if (dz) {
        // value = −num/den: d/dz = −dnum/den + num/den²·dden
        dz[y] += static_cast<float>(-1.0 / den);
        dz[other] += static_cast<float>(1.0 / den);
        dz[top[0]] += static_cast<float>(num / (den * den));
        dz[top[2]] -= static_cast<float>(num / (den * den));
    }
    return static_cast<float>(-num / den);
}

// Targeted DLR: −(z_y − z_t) / (z_π1 − (z_π3 + z_π4)/2 + 1e-12); C ≥ 4.
CW_HD float dlr_targeted(const float* z, int64_t C, int32_t y, int32_t t, float* dz) {
    int32_t top[kMaxTop];
    top_classes(z, C, 4, top);
    const double num = double(z[y]) - z[t];
    const double den = double(z[top[0]]) - 0.5 * (double(z[top[2]]) + z[top[3]]) + 1e-12;
    zero_row(dz, C);
    if (dz) {
        const double q = num / (den * den);
        dz[y] += static_cast<float>(-1.0 / den);
        dz[t] += static_cast<float>(1.0 / den);
        dz[top[0]] += static_cast<float>(q);
        dz[top[2]] -= static_cast<float>(0.5 * q);
        dz[top[3]] -= static_cast<float>(0.5 * q);
    }
    return static_cast<float>(-num / den);
}

// FAB's linearised function (docs/protocols/attacks.md §5): h = z_t − z_y.
CW_HD float logit_difference(const float* z, int64_t C, int32_t y, int32_t t, float* dz) {
    zero_row(dz, C);
    if (dz) {
        dz[t] += 1.f;
        dz[y] -= 1.f;
    }
    return z[t] - z[y];
}

// The objective `kind` of one row; t is ignored by the untargeted kinds.
CW_HD float objective(AttackObjective kind, const float* z, int64_t C, int32_t y, int32_t t, float kappa, float* dz) {
    switch (kind) {
        case AttackObjective::CrossEntropy: return cross_entropy(z, C, y, dz);
        case AttackObjective::TargetCrossEntropy: {
            const float v = cross_entropy(z, C, t, dz);
            if (dz)
                for (int64_t j = 0; j < C; ++j) dz[j] = -dz[j];
            return -v;
        }
        case AttackObjective::CwMargin: return cw_objective(z, C, y, kappa, dz);
        case AttackObjective::TargetMargin: return targeted_margin(z, C, t, dz);
        case AttackObjective::Dlr: return dlr(z, C, y, dz);
        case AttackObjective::DlrTargeted: return dlr_targeted(z, C, y, t, dz);
        case AttackObjective::LogitDifference: return logit_difference(z, C, y, t, dz);
    }
    return 0.f;
}

// One row of the attack_objective kernel: the value, dvalue/dz (dz may be null) and the flags of sample i.
CW_HD void objective_row(AttackObjective kind, const float* z, int64_t C, int32_t label, int32_t target, float kappa,
                         float* value, float* dz, float* wrong, float* on_target) {
    *value = objective(kind, z, C, label, target, kappa, dz);
    const int32_t pred = argmax_row(z, C);
    *wrong = pred != label ? 1.f : 0.f;
    *on_target = pred == target ? 1.f : 0.f;
}

CW_HD bool objective_is_targeted(AttackObjective kind) {
    return kind == AttackObjective::TargetCrossEntropy || kind == AttackObjective::TargetMargin ||
           kind == AttackObjective::DlrTargeted || kind == AttackObjective::LogitDifference;
}
// The fewest classes an objective is defined for.
CW_HD int64_t objective_min_classes(AttackObjective kind) {
    return kind == AttackObjective::Dlr ? 3 : kind == AttackObjective::DlrTargeted ? 4 : 2;
}

// ---- Square's window (docs/protocols/attacks.md §6) ----------------------------------------------------------------
// One value inside the window: x_best + 2ε·σ (σ = ±1, the channel's colour), clipped to [x_nat − ε, x_nat + ε] and
// then to the box, so the window lands on x_nat ± ε wherever the box allows.
CW_HD float square_window_value(float x_best, float x_nat, float eps, float sigma) {
    const float v = fminf(fmaxf(x_best + 2.f * eps * sigma, x_nat - eps), x_nat + eps);
    return clamp01(v);
}

// ---- the step: ascent, then the ε-ball of x_nat, then the box [0, 1] (docs/protocols/attacks.md §0) ------------------------------
// L∞, element-wise: a = x + α·sign(g); x ← clip_box(x_nat + clip_{±ε}(a − x_nat)). With no gradient (projection
// only) a = x.
CW_HD float linf_step(float x, float g, float x_nat, float eps, float alpha, bool has_grad) {
    const float a = has_grad ? x + alpha * sgn(g) : x;
    const float d = fminf(fmaxf(a - x_nat, -eps), eps);
    return clamp01(x_nat + d);
}

// L2 takes two per-sample norms: the step scale α/(||g||₂ + 1e-10) and, after the step, the ball scale
// ε/||a − x_nat||₂ when that distance exceeds ε (else 1; a zero δ stays zero).
CW_HD float l2_step_scale(float alpha, double grad_sq_norm) {
    return alpha / (static_cast<float>(::sqrt(grad_sq_norm)) + 1e-10f);
}
CW_HD float l2_ball_scale(float eps, double delta_sq_norm) {
    const float norm = static_cast<float>(::sqrt(delta_sq_norm));
    return norm > eps ? eps / norm : 1.f;
}
CW_HD float l2_stepped(float x, float g, float step_scale, bool has_grad) { return has_grad ? x + step_scale * g : x; }
CW_HD float l2_project(float a, float x_nat, float ball_scale) { return clamp01(x_nat + (a - x_nat) * ball_scale); }

// ---- FAB-T's step (docs/protocols/attacks.md §5) ---------------------------------------------------------------------
// The box-constrained L∞ projection onto ⟨w, v⟩ = b (engine/linf_box_projection.h) moves coordinate j of p in the
// direction that helps, sign(w_j·r) with r = b − ⟨w, p⟩, by min(λ, room_j): its room is 1 − p_j upwards, p_j
// downwards. Coordinates with w_j = 0 never move.
CW_HD bool fab_moves_up(float w, bool r_up) { return (w > 0) == r_up; }
CW_HD float fab_room(float p, float w, bool r_up) { return fab_moves_up(w, r_up) ? 1.f - p : p; }
CW_HD float fab_coordinate(double lambda, float p, float w, bool r_up) {
    if (w == 0) return 0.f;
    const float step = static_cast<float>(fmin(lambda, static_cast<double>(fab_room(p, w, r_up))));
    return fab_moves_up(w, r_up) ? step : -step;
}
// The weight of the clean point's projection, from both steps' L∞ norms.
CW_HD float fab_alpha(float norm1, float norm2, float alpha_max) {
    const float a1 = fmaxf(norm1, 1e-8f), a2 = fmaxf(norm2, 1e-8f);
    return fminf(fmaxf(a1 / (a1 + a2), 0.f), alpha_max);
}
// The new iterate's coordinate: both overshot projections mixed by a, then the box.
CW_HD float fab_mix(float x1, float d1, float x_nat, float d2, float eta, float a) {
    const float from_iterate = x1 + eta * d1, from_clean = x_nat + eta * d2;
    return clamp01(from_iterate * (1 - a) + from_clean * a);
}
// A misclassified iterate is pulled back towards the clean point.
CW_HD float fab_pull_back(float x1, float x_nat, float beta) { return x_nat + beta * (x1 - x_nat); }

}  // namespace cw::attack_math
