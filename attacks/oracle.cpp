#include "attacks/oracle.h"

#include "attacks/losses.h"
#include "engine/ops.h"

namespace cw::attacks {

int32_t ModelOutput::pred(int64_t i) const { return argmax_row(row(i), classes); }

std::vector<int32_t> ModelOutput::preds() const {
    std::vector<int32_t> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out[i] = pred(i);
    return out;
}

Objective make_objective(AttackObjective kind, const std::vector<int32_t>& labels, Device device,
                         const std::vector<int32_t>& targets, float kappa) {
    Objective J;
    J.kind = kind;
    J.labels = Tensor::from_labels(labels, device);
    if (!targets.empty()) J.targets = Tensor::from_labels(targets, device);
    J.kappa = kappa;
    return J;
}

Tensor ModelOracle::logits(const Tensor& x) {
    NoGradGuard no_grad;
    sample_forwards_ += x.size(0);
    return model_.forward(x);
}

Evaluation ModelOracle::evaluate(const Tensor& x, const Objective& J) {
    Evaluation e;
    e.logits = logits(x);
    e.obj = attack_objective(J.kind, e.logits, J.labels, J.targets, J.kappa, false);
    return e;
}

Evaluation ModelOracle::value_and_grad(const Tensor& x, const Objective& J) {
    InputGradOnlyGuard input_only;  // the attack step: no weight-gradient work, no parameter .grad touched
    Tensor input = x.detach();      // shares x's storage; the attack updates x in place after this pass
    input.set_requires_grad(true);
    Evaluation e;
    e.logits = model_.forward(input);
    sample_forwards_ += x.size(0);
    e.obj = attack_objective(J.kind, e.logits.detach(), J.labels, J.targets, J.kappa, true);
    // Σ_i J_i(z_i) has input gradient J_zᵀ·dJ/dz; backpropagating the constant weights dJ/dz through Σ(z ⊙ dJ/dz)
    // gives exactly that.
    sum(mul(e.logits, e.obj.dz)).backward();
    e.grad = input.grad();
    if (!e.grad.defined()) e.grad = Tensor::zeros(x.shape(), DType::F32, x.device());  // x does not reach the output
    e.logits = e.logits.detach();
    return e;
}

std::vector<int32_t> ModelOracle::predict(const Tensor& x) {
    if (x.size(0) == 0) return {};
    return argmax(logits(x), 1).to_int_vector();
}

int64_t ModelOracle::num_classes(const Tensor& x) {
    if (classes_ == 0) {
        const bool was_training = model_.is_training();
        model_.eval();
        NoGradGuard no_grad;
        classes_ = model_.forward(take_rows(x, {0})).size(1);
        model_.train(was_training);
    }
    return classes_;
}

ModelOutput ModelOracle::forward(const Tensor& x) {
    ModelOutput out;
    out.n = x.size(0);
    if (out.n == 0) return out;
    const Tensor z = logits(x);
    out.classes = z.size(1);
    out.logits = z.to_vector();
    return out;
}

ModelOutput ModelOracle::forward(const Images& x) {
    if (x.n == 0) return {};
    return forward(to_tensor(x, device_));
}

}  // namespace cw::attacks
