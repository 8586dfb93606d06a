#include "attacks/oracle.h"

#include "attacks/losses.h"

namespace cw::attacks {

int32_t ModelOutput::pred(int64_t i) const { return argmax_row(row(i), classes); }

std::vector<int32_t> ModelOutput::preds() const {
    std::vector<int32_t> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out[i] = pred(i);
    return out;
}

ModelOutput ModelOracle::forward(const Images& x) {
    ModelOutput out;
    out.n = x.n;
    if (x.n == 0) return out;
    NoGradGuard no_grad;
    const Tensor logits = model_.forward(to_tensor(x, device_));
    sample_forwards_ += x.n;
    out.classes = logits.size(1);
    out.logits = logits.to_vector();
    return out;
}

ModelOutput ModelOracle::value_and_grad(const Images& x, const Objective& J) {
    ModelOutput out;
    out.n = x.n;
    if (x.n == 0) return out;
    InputGradOnlyGuard input_only;  // the attack step: no weight-gradient work, no parameter .grad touched
    Tensor input = to_tensor(x, device_);
    input.set_requires_grad(true);
    const Tensor logits = model_.forward(input);
    sample_forwards_ += x.n;
    out.classes = logits.size(1);
    out.logits = logits.to_vector();

    // Σ_i J_i(z_i) has input gradient J_zᵀ·dJ/dz; backpropagating the constant weights G = dJ/dz through
    // Σ(z ⊙ G) gives exactly that, so any host-side objective gets an exact input gradient.
    std::vector<float> G(out.logits.size(), 0.f);
    out.value.resize(static_cast<size_t>(x.n));
    for (int64_t i = 0; i < x.n; ++i) out.value[i] = J(i, out.row(i), out.classes, G.data() + i * out.classes);
    const Tensor surrogate = sum(mul(logits, Tensor::from_vector(G, logits.shape(), device_)));
    surrogate.backward();

    out.grad.n = x.n;
    out.grad.sample_shape = x.sample_shape;
    const Tensor g = input.grad();
    out.grad.v = g.defined() ? g.to_vector() : std::vector<float>(x.v.size(), 0.f);
    return out;
}

}  // namespace cw::attacks
