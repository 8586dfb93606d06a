// Probabilities and losses: softmax, log-softmax, cross-entropy (label smoothing, per-sample weights) and the
// KL divergence between two predicted distributions (TRADES).
#include "engine/ops/op_util.h"

namespace cw {

using namespace detail;

namespace {
Tensor softmax_impl(const char* name, const Tensor& logits, bool log) {
    check_inputs(name, {&logits});
    check_rank(name, logits, 2, "logits");
    const int64_t rows = logits.size(0), cols = logits.size(1);
    Tensor y = Tensor::empty(logits.shape(), DType::F32, logits.device());
    if (y.numel()) kernels(logits).softmax_rows(logits.f32(), y.f32(), rows, cols, log);
    Tensor y_saved = y.detach();
    record(y, name, {logits}, [y_saved, rows, cols, log](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::empty(y_saved.shape(), DType::F32, gy.device());
        if (gx.numel()) kernels(gy).softmax_rows_backward(y_saved.f32(), gy.f32(), gx.f32(), rows, cols, log);
        sink.add(0, std::move(gx));
    });
    return y;
}

Tensor reduce(const Tensor& per_sample, Reduction r) {
    switch (r) {
        case Reduction::None: return per_sample;
        case Reduction::Sum: return sum(per_sample);
        case Reduction::Mean: return mean(per_sample);
    }
    return per_sample;
}
}  // namespace

Tensor softmax(const Tensor& logits) { return softmax_impl("softmax", logits, false); }
Tensor log_softmax(const Tensor& logits) { return softmax_impl("log_softmax", logits, true); }

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, const CrossEntropyOptions& opt) {
    check_inputs("cross_entropy", {&logits}, {&labels});
    check_rank("cross_entropy", logits, 2, "logits");
    check_rank("cross_entropy", labels, 1, "labels");
    const int64_t rows = logits.size(0), cols = logits.size(1);
    if (labels.size(0) != rows)
        throw ShapeError("cross_entropy: " + std::to_string(labels.size(0)) + " labels for logits " +
                         shape_str(logits.shape()));
    if (opt.label_smoothing < 0.f || opt.label_smoothing > 1.f)
        throw Error("cross_entropy: label_smoothing must be in [0, 1], got " + std::to_string(opt.label_smoothing));
    if (labels.device().is_cpu())
        for (int64_t i = 0; i < rows; ++i)
            if (labels.i32()[i] < 0 || labels.i32()[i] >= cols)
                throw ShapeError("cross_entropy: label " + std::to_string(labels.i32()[i]) + " of sample " +
                                 std::to_string(i) + " is outside [0, " + std::to_string(cols) + ")");
    Tensor loss = Tensor::empty({rows}, DType::F32, logits.device());
    Tensor probs = Tensor::empty(logits.shape(), DType::F32, logits.device());
    const float smoothing = opt.label_smoothing;
    if (rows) kernels(logits).cross_entropy_forward(logits.f32(), labels.i32(), loss.f32(), probs.f32(), rows, cols, smoothing);
    record(loss, "cross_entropy", {logits}, [probs, labels, rows, cols, smoothing](const Tensor& gy, GradSink& sink) {
        Tensor gx = Tensor::empty(probs.shape(), DType::F32, gy.device());
        if (rows) kernels(gy).cross_entropy_backward(probs.f32(), labels.i32(), gy.f32(), gx.f32(), rows, cols, smoothing);
        sink.add(0, std::move(gx));
    });
    if (opt.sample_weights.defined()) {
        check_inputs("cross_entropy (sample_weights)", {&logits, &opt.sample_weights});
        if (opt.sample_weights.shape() != Shape{rows})
            throw ShapeError("cross_entropy: sample_weights " + shape_str(opt.sample_weights.shape()) +
                             " must be [" + std::to_string(rows) + "]");
        loss = mul(loss, opt.sample_weights.detach());
    }
    return reduce(loss, opt.reduction);
}

Tensor kl_div(const Tensor& p_logits, const Tensor& q_logits, Reduction reduction) {
    check_inputs("kl_div", {&p_logits, &q_logits});
    check_rank("kl_div", p_logits, 2, "p_logits");
    if (p_logits.shape() != q_logits.shape())
        throw ShapeError("kl_div: p_logits " + shape_str(p_logits.shape()) + " and q_logits " +
                         shape_str(q_logits.shape()) + " differ");
    const int64_t rows = p_logits.size(0), cols = p_logits.size(1);
    Tensor loss = Tensor::empty({rows}, DType::F32, p_logits.device());
    Tensor log_p = Tensor::empty(p_logits.shape(), DType::F32, p_logits.device());
    Tensor log_q = Tensor::empty(p_logits.shape(), DType::F32, p_logits.device());
    if (rows) kernels(p_logits).kl_div_forward(p_logits.f32(), q_logits.f32(), loss.f32(), log_p.f32(), log_q.f32(), rows, cols);
    record(loss, "kl_div", {p_logits, q_logits}, [log_p, log_q, rows, cols](const Tensor& gy, GradSink& sink) {
        Tensor gp = sink.needs(0) ? Tensor::empty(log_p.shape(), DType::F32, gy.device()) : Tensor();
        Tensor gq = sink.needs(1) ? Tensor::empty(log_p.shape(), DType::F32, gy.device()) : Tensor();
        if (rows)
            kernels(gy).kl_div_backward(log_p.f32(), log_q.f32(), gy.f32(), gp.defined() ? gp.f32() : nullptr,
                                        gq.defined() ? gq.f32() : nullptr, rows, cols);
        if (gp.defined()) sink.add(0, std::move(gp));
        if (gq.defined()) sink.add(1, std::move(gq));
    });
    return reduce(loss, reduction);
}

}  // namespace cw
