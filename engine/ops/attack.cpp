// The attack building blocks of engine/attack_ops.h: shape checks, then the device's kernel. No autograd.
#include "engine/attack_ops.h"

#include "engine/attack_math.h"
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

namespace {
int64_t sample_dim(const Tensor& x) { return x.size(0) == 0 ? 0 : x.numel() / x.size(0); }

void check_per_sample(const char* op, const Tensor& v, int64_t n, const char* what) {
    if (v.ndim() != 1 || v.size(0) != n)
        throw ShapeError(std::string(op) + ": " + what + " must be [" + std::to_string(n) + "] (one per sample), got " +
                         shape_str(v.shape()));
}

void check_same_shape(const char* op, const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
    if (a.ndim() < 1 || a.shape() != b.shape())
        throw ShapeError(std::string(op) + ": " + a_name + " " + shape_str(a.shape()) + " and " + b_name + " " +
                         shape_str(b.shape()) + " must have one shape [n, ...]");
}

Tensor row_index(const char* op, const std::vector<int64_t>& rows, int64_t n, Device device) {
    std::vector<int32_t> idx;
    idx.reserve(rows.size());
    for (int64_t r : rows) {
        if (r < 0 || r >= n)
            throw ShapeError(std::string(op) + ": row " + std::to_string(r) + " is outside [0, " + std::to_string(n) +
                             ")");
        idx.push_back(static_cast<int32_t>(r));
    }
    return Tensor::from_ints(idx, {static_cast<int64_t>(idx.size())}, device);
}
}  // namespace

ObjectiveValues attack_objective(AttackObjective kind, const Tensor& logits, const Tensor& labels,
                                 const Tensor& targets, float kappa, bool with_dz) {
    const bool targeted = attack_math::objective_is_targeted(kind);
    if (targeted && !targets.defined())
        throw ShapeError("attack_objective: this objective is targeted and needs targets");
    const bool have_targets = targets.defined();   // optional for the others: on_target is reported when given
    if (have_targets) check_inputs("attack_objective", {&logits}, {&labels, &targets});
    else check_inputs("attack_objective", {&logits}, {&labels});
    check_rank("attack_objective", logits, 2, "logits");
    const int64_t n = logits.size(0), C = logits.size(1);
    if (C < attack_math::objective_min_classes(kind))
        throw ShapeError("attack_objective: this objective needs at least " +
                         std::to_string(attack_math::objective_min_classes(kind)) + " classes, the logits have " +
                         std::to_string(C));
    if (labels.ndim() != 1 || labels.size(0) != n)
        throw ShapeError("attack_objective: labels " + shape_str(labels.shape()) + " for logits " +
                         shape_str(logits.shape()));
    if (have_targets && (targets.ndim() != 1 || targets.size(0) != n))
        throw ShapeError("attack_objective: targets " + shape_str(targets.shape()) + " for logits " +
                         shape_str(logits.shape()));
    const Device d = logits.device();
    ObjectiveValues out{Tensor::empty({n}, DType::F32, d), with_dz ? Tensor::empty({n, C}, DType::F32, d) : Tensor(),
                        Tensor::empty({n}, DType::F32, d), Tensor::empty({n}, DType::F32, d)};
    if (n)
        kernels(logits).attack_objective(kind, logits.f32(), labels.i32(), have_targets ? targets.i32() : nullptr, kappa,
                                         out.value.f32(), with_dz ? out.dz.f32() : nullptr, out.wrong.f32(),
                                         out.on_target.f32(), n, C);
    return out;
}

void attack_step_(AttackNorm norm, Tensor& x_adv, const Tensor& grad, const Tensor& x_nat, const Tensor& eps,
                  const Tensor& alpha) {
    if (grad.defined()) check_inputs("attack_step", {&x_adv, &grad, &x_nat, &eps, &alpha});
    else check_inputs("attack_step", {&x_adv, &x_nat, &eps, &alpha});
    if (x_adv.ndim() < 1 || x_nat.shape() != x_adv.shape() || (grad.defined() && grad.shape() != x_adv.shape()))
        throw ShapeError("attack_step: x_adv " + shape_str(x_adv.shape()) + ", x_nat " + shape_str(x_nat.shape()) +
                         (grad.defined() ? ", grad " + shape_str(grad.shape()) : std::string()) +
                         " must have one shape [n, ...]");
    const int64_t n = x_adv.size(0);
    check_per_sample("attack_step", eps, n, "eps");
    check_per_sample("attack_step", alpha, n, "alpha");
    kernels(x_adv).attack_step(norm, x_adv.f32(), grad.defined() ? grad.f32() : nullptr, x_nat.f32(), eps.f32(),
                               alpha.f32(), n, sample_dim(x_adv));
}

Tensor take_rows(const Tensor& x, const std::vector<int64_t>& rows) {
    check_inputs("take_rows", {&x});
    if (x.ndim() < 1) throw ShapeError("take_rows: x must have a sample dimension, got " + shape_str(x.shape()));
    Shape shape = x.shape();
    shape[0] = static_cast<int64_t>(rows.size());
    Tensor y = Tensor::empty(shape, DType::F32, x.device());
    if (y.numel()) {
        const Tensor idx = row_index("take_rows", rows, x.size(0), x.device());
        kernels(x).copy_rows(x.f32(), idx.i32(), y.f32(), nullptr, shape[0], sample_dim(x));
    }
    return y;
}

void put_rows_(Tensor& dst, const std::vector<int64_t>& rows, const Tensor& src) {
    check_inputs("put_rows", {&dst, &src});
    Shape want = dst.shape();
    if (!want.empty()) want[0] = static_cast<int64_t>(rows.size());
    if (dst.ndim() < 1 || src.shape() != want)
        throw ShapeError("put_rows: " + std::to_string(rows.size()) + " rows of " + shape_str(src.shape()) +
                         " do not fit " + shape_str(dst.shape()));
    if (src.numel() == 0) return;
    const Tensor idx = row_index("put_rows", rows, dst.size(0), dst.device());
    kernels(dst).copy_rows(src.f32(), nullptr, dst.f32(), idx.i32(), src.size(0), sample_dim(dst));
}

Tensor where_rows(const Tensor& mask, const Tensor& a, const Tensor& b) {
    check_inputs("where_rows", {&mask, &a, &b});
    check_same_shape("where_rows", a, "a", b, "b");
    check_per_sample("where_rows", mask, a.size(0), "mask");
    Tensor y = Tensor::empty(a.shape(), DType::F32, a.device());
    if (y.numel()) kernels(a).where_rows(mask.f32(), a.f32(), b.f32(), y.f32(), a.size(0), sample_dim(a));
    return y;
}

void square_window_(Tensor& x_adv, const Tensor& x_nat, const Tensor& eps, const std::vector<int64_t>& rows,
                    const SquareWindow& win) {
    check_inputs("square_window", {&x_adv, &x_nat, &eps});
    if (x_adv.ndim() != 4 || x_nat.ndim() != 4 || x_adv.size(1) != x_nat.size(1) || x_adv.size(2) != x_nat.size(2) ||
        x_adv.size(3) != x_nat.size(3))
        throw ShapeError("square_window: x_adv " + shape_str(x_adv.shape()) + " and x_nat " + shape_str(x_nat.shape()) +
                         " must be images [n, c, h, w] of one size");
    if (static_cast<int64_t>(rows.size()) != x_adv.size(0))
        throw ShapeError("square_window: " + std::to_string(rows.size()) + " rows for " +
                         std::to_string(x_adv.size(0)) + " images");
    check_per_sample("square_window", eps, x_nat.size(0), "eps");
    const int64_t c = x_adv.size(1), h = x_adv.size(2), w = x_adv.size(3);
    if (c > 32) throw ShapeError("square_window: at most 32 channels, got " + std::to_string(c));
    if (win.side < 1 || win.top < 0 || win.left < 0 || win.top + win.side > h || win.left + win.side > w)
        throw ShapeError("square_window: a " + std::to_string(win.side) + "-pixel window at (" +
                         std::to_string(win.top) + ", " + std::to_string(win.left) + ") does not fit " +
                         std::to_string(h) + "x" + std::to_string(w) + " images");
    if (x_adv.numel() == 0) return;
    const Tensor idx = row_index("square_window", rows, x_nat.size(0), x_adv.device());
    kernels(x_adv).square_window(x_adv.f32(), x_nat.f32(), idx.i32(), eps.f32(), x_adv.size(0), c, h, w, win.top,
                                 win.left, win.side, win.negative_channels);
}

void fab_step_(Tensor& x1, const Tensor& x_nat, const Tensor& grad, const Tensor& value, float eta, float alpha_max) {
    check_inputs("fab_step", {&x1, &x_nat, &grad, &value});
    check_same_shape("fab_step", x1, "x1", x_nat, "x_nat");
    check_same_shape("fab_step", x1, "x1", grad, "grad");
    check_per_sample("fab_step", value, x1.size(0), "value");
    if (x1.numel() == 0) return;
    kernels(x1).fab_step(x1.f32(), x_nat.f32(), grad.f32(), value.f32(), x1.size(0), sample_dim(x1), eta, alpha_max);
}

void fab_record_(Tensor& x1, const Tensor& x_nat, const Tensor& wrong, float beta, Tensor& best_adv,
                 Tensor& best_dist) {
    check_inputs("fab_record", {&x1, &x_nat, &wrong, &best_adv, &best_dist});
    check_same_shape("fab_record", x1, "x1", x_nat, "x_nat");
    check_same_shape("fab_record", x1, "x1", best_adv, "best_adv");
    check_per_sample("fab_record", wrong, x1.size(0), "wrong");
    check_per_sample("fab_record", best_dist, x1.size(0), "best_dist");
    if (x1.numel() == 0) return;
    kernels(x1).fab_record(x1.f32(), x_nat.f32(), wrong.f32(), beta, best_adv.f32(), best_dist.f32(), x1.size(0),
                           sample_dim(x1));
}

}  // namespace cw
