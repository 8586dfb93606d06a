#pragma once
// Device-side building blocks of the attacks: the per-sample objective of a batch of logits, the projected step,
// and row-wise bookkeeping (subsets of samples, per-sample selection). None records autograd history; all run on
// the inputs' device through the Backend, so an attack's loop touches the host only for the decisions it makes
// there. Kernels and formulas: engine/backend.h, engine/attack_math.h.
#include <vector>

#include "engine/backend.h"
#include "engine/tensor.h"

namespace cw {

struct ObjectiveValues {
    Tensor value;      // [n]: the objective per sample
    Tensor dz;         // [n, C]: dvalue/dlogits (undefined unless asked for)
    Tensor wrong;      // [n]: 1 where argmax ≠ label
    Tensor on_target;  // [n]: 1 where argmax = target (0 without targets)
};
// logits [n, C]; labels, targets int32 [n] (targets undefined for the untargeted objectives).
ObjectiveValues attack_objective(AttackObjective kind, const Tensor& logits, const Tensor& labels,
                                 const Tensor& targets, float kappa, bool with_dz);

// x_adv [n, ...] ← Π_{ε_i, x_nat} ∩ [0,1] (x_adv + α_i·dir(grad_i)) in place; grad undefined: projection only.
// eps and alpha: [n] on the same device.
void attack_step_(AttackNorm norm, Tensor& x_adv, const Tensor& grad, const Tensor& x_nat, const Tensor& eps,
                  const Tensor& alpha);

// Rows `rows` of x (a new tensor of shape [rows.size(), ...]); put_rows_ writes src's rows back into those rows.
Tensor take_rows(const Tensor& x, const std::vector<int64_t>& rows);
void put_rows_(Tensor& dst, const std::vector<int64_t>& rows, const Tensor& src);
// Row i of a where mask[i] ≠ 0, else row i of b (exact copies); mask [n].
Tensor where_rows(const Tensor& mask, const Tensor& a, const Tensor& b);

// Square's step (formula: attack_math::square_window_value): in each image k of x_adv [n, c, h, w], the
// side × side window at (top, left) moves to x_nat ± ε of sample rows[k] (x_nat [N, c, h, w], eps [N]), with
// channel ch's sign negative where bit ch of negative_channels is set. Every other value stays as it was.
struct SquareWindow {
    int64_t top = 0, left = 0, side = 1;
    uint32_t negative_channels = 0;
};
void square_window_(Tensor& x_adv, const Tensor& x_nat, const Tensor& eps, const std::vector<int64_t>& rows,
                    const SquareWindow& window);

// FAB-T's step (docs/protocols/attacks.md §5), in place on every sample i of x1 [n, ...]: linearise the objective
// at x1_i (value [n], its input gradient grad [n, ...]), project x1_i and x_nat_i onto that hyperplane with the
// smallest L∞ steps that stay in the box, and move x1_i to the overshot mix of both (attack_math::fab_mix).
void fab_step_(Tensor& x1, const Tensor& x_nat, const Tensor& grad, const Tensor& value, float eta, float alpha_max);
// FAB-T's bookkeeping after the check: every sample with wrong[i] ≠ 0 becomes the best (best_adv [n, ...],
// best_dist [n]) if it is closer to x_nat in L∞ than the best so far, and is then pulled back towards x_nat by β.
void fab_record_(Tensor& x1, const Tensor& x_nat, const Tensor& wrong, float beta, Tensor& best_adv,
                 Tensor& best_dist);

}  // namespace cw
