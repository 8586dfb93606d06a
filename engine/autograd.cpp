#include "engine/autograd.h"

#include <cmath>
#include <iomanip>
#include <unordered_set>

#include "engine/backend.h"

namespace cw {

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_param_grad_enabled = true;
thread_local TapeRecorder* t_recorder = nullptr;
bool g_poison = false;
}  // namespace

bool poison_new_tensors() { return g_poison; }
void set_poison_new_tensors(bool on) { g_poison = on; }

bool grad_enabled() { return t_grad_enabled; }
bool param_grad_enabled() { return t_param_grad_enabled; }

NoGradGuard::NoGradGuard() : prev_(t_grad_enabled) { t_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { t_grad_enabled = prev_; }
InputGradOnlyGuard::InputGradOnlyGuard() : prev_(t_param_grad_enabled), prev_grad_(t_grad_enabled) {
    t_param_grad_enabled = false;
    t_grad_enabled = true;
}
InputGradOnlyGuard::~InputGradOnlyGuard() {
    t_param_grad_enabled = prev_;
    t_grad_enabled = prev_grad_;
}

bool needs_grad(const Tensor& t) {
    if (!t_grad_enabled || !t.defined() || !t.requires_grad()) return false;
    return t_param_grad_enabled || !t.is_parameter();
}

bool any_needs_grad(std::initializer_list<const Tensor*> ts) {
    for (auto* t : ts)
        if (needs_grad(*t)) return true;
    return false;
}

double tensor_l2_norm(const Tensor& t) {
    if (!t.defined() || t.numel() == 0) return 0;
    return std::sqrt(static_cast<double>(backend(t.device()).sum_squares(t.f32(), t.numel())));
}

namespace {
// Whether nobody but this handle sees the buffer: the handle is held once and so is its storage (a reshape's
// gradient is a view of another tensor's storage).
bool exclusive(const std::shared_ptr<TensorImpl>& t) { return t.use_count() == 1 && t->storage.use_count() == 1; }
}  // namespace

void GradSink::add(size_t i, Tensor g) {
    if (!needs(i)) return;
    TensorImpl& in = node_.inputs[i].impl();
    if (g.shape() != in.shape)
        throw AutogradError(node_.op + " backward: gradient for input " + std::to_string(i) + " has shape " +
                            shape_str(g.shape()) + ", expected " + shape_str(in.shape));
    if (TapeRecorder::active() && node_.tape_entry >= 0) {
        if (norms_.size() <= i) norms_.resize(i + 1, -1);
        norms_[i] = tensor_l2_norm(g);
    }
    // An intermediate whose gradient only its own backward reads (no hooks, not retained) may hold a buffer shared
    // with others: a residual add hands one gradient to both its inputs, and copying it cost a pass over the
    // activation. Such a buffer is never written; a later contribution adds in place only once nobody else holds
    // it (by then, in a residual block), into a copy otherwise. Leaves and the rest keep an exclusive buffer and
    // accumulate in place, as a user holding their .grad expects.
    const bool read_only_here = in.grad_fn && in.hooks.empty() && !in.retain_grad;
    if (!in.grad) {
        in.grad = exclusive(g.impl_ptr()) || read_only_here ? g.impl_ptr() : g.clone().impl_ptr();
        in.grad->grad_fn.reset();
        in.grad->requires_grad = false;
        return;
    }
    if (read_only_here && !exclusive(in.grad)) in.grad = Tensor(in.grad).clone().impl_ptr();
    backend(g.device()).axpy(1.f, g.f32(), static_cast<float*>(in.grad->storage->writable()), g.numel());
}

bool record(Tensor& out, const char* op, const std::vector<Tensor>& inputs, BackwardFn fn) {
    bool any = false;
    for (const auto& t : inputs) any = any || needs_grad(t);
    if (!any) return false;
    auto node = std::make_shared<Node>();
    node->op = op;
    node->inputs.reserve(inputs.size());
    for (const auto& t : inputs) {
        node->inputs.push_back(needs_grad(t) ? t : Tensor());
        node->input_shapes.push_back(t.defined() ? t.shape() : Shape{});
    }
    node->output_shape = out.shape();
    node->backward = std::move(fn);
    if (auto* rec = TapeRecorder::active()) node->tape_entry = rec->add(*node);
    out.impl().grad_fn = std::move(node);
    out.impl().requires_grad = true;
    return true;
}

namespace {
// Reverse topological order (outputs before the nodes that feed them), iterative so deep graphs cannot
// overflow the stack.
std::vector<std::shared_ptr<TensorImpl>> topo_order(const std::shared_ptr<TensorImpl>& root) {
    std::vector<std::shared_ptr<TensorImpl>> post;
    std::unordered_set<TensorImpl*> seen;
    std::vector<std::pair<std::shared_ptr<TensorImpl>, size_t>> stack;
    stack.emplace_back(root, 0);
    seen.insert(root.get());
    while (!stack.empty()) {
        auto& [impl, next] = stack.back();
        const auto& inputs = impl->grad_fn ? impl->grad_fn->inputs : std::vector<Tensor>{};
        if (next < inputs.size()) {
            const Tensor& in = inputs[next++];
            if (in.defined() && !seen.count(in.impl_ptr().get())) {
                seen.insert(in.impl_ptr().get());
                stack.emplace_back(in.impl_ptr(), 0);
            }
        } else {
            post.push_back(impl);
            stack.pop_back();
        }
    }
    return {post.rbegin(), post.rend()};
}
}  // namespace

void run_backward(const Tensor& root, bool retain_graph) {
    if (root.numel() != 1)
        throw AutogradError("backward: the loss must be a scalar, got shape " + shape_str(root.shape()) +
                            " (reduce it with sum() or mean() first)");
    if (root.impl().graph_released)
        throw AutogradError("backward: the graph behind this loss was already freed by an earlier backward(); "
                            "call backward(/*retain_graph=*/true) the first time to run it twice");
    if (!root.requires_grad())
        throw AutogradError("backward: the loss does not require grad (no input or parameter needs a gradient, "
                            "or it was computed under NoGradGuard)");
    auto order = topo_order(root.impl_ptr());
    if (!root.impl().grad) root.impl().grad = Tensor::ones(root.shape(), root.device()).impl_ptr();
    std::vector<std::shared_ptr<TensorImpl>> leaves;
    for (auto& impl : order) {
        if (!impl->grad_fn) {
            if (impl->grad && !impl->hooks.empty()) leaves.push_back(impl);
            continue;
        }
        auto node = impl->grad_fn;
        if (impl->grad) {
            Tensor g(impl->grad);
            for (auto& hook : impl->hooks) hook(g);
            GradSink sink(*node);
            {
                NoGradGuard plain;  // gradients are plain values: ops used inside a backward record nothing
                node->backward(g, sink);
            }
            if (auto* rec = TapeRecorder::active(); rec && node->tape_entry >= 0 &&
                                                     node->tape_entry < static_cast<long>(rec->entries().size())) {
                auto& e = rec->entry(node->tape_entry);
                e.grad_out_norm = tensor_l2_norm(g);
                e.grad_in_norms = sink.norms();
                e.grad_in_norms.resize(node->inputs.size(), -1);
            }
            if (!impl->retain_grad && impl != root.impl_ptr()) impl->grad.reset();
        }
        if (!retain_graph) {
            impl->grad_fn.reset();
            impl->graph_released = true;
        }
    }
    for (auto& leaf : leaves) {
        Tensor g(leaf->grad);
        for (auto& hook : leaf->hooks) hook(g);
    }
}

TapeRecorder::TapeRecorder() : prev_(t_recorder) { t_recorder = this; }
TapeRecorder::~TapeRecorder() { t_recorder = prev_; }
TapeRecorder* TapeRecorder::active() { return t_recorder; }

long TapeRecorder::add(const Node& n) {
    entries_.push_back({n.op, n.input_shapes, n.output_shape, -1, {}});
    return static_cast<long>(entries_.size()) - 1;
}

void TapeRecorder::print(std::ostream& os) const {
    os << std::left << std::setw(5) << "#" << std::setw(22) << "op" << std::setw(44) << "inputs" << std::setw(20)
       << "output" << "grad norms (out | in...)\n";
    for (size_t i = 0; i < entries_.size(); ++i) {
        const auto& e = entries_[i];
        std::string ins;
        for (size_t j = 0; j < e.input_shapes.size(); ++j) ins += (j ? " " : "") + shape_str(e.input_shapes[j]);
        os << std::setw(5) << i << std::setw(22) << e.op << std::setw(44) << ins << std::setw(20)
           << shape_str(e.output_shape);
        if (e.grad_out_norm < 0) {
            os << "-";
        } else {
            os << std::setprecision(4) << e.grad_out_norm << " |";
            for (double n : e.grad_in_norms) {
                if (n < 0) os << " -";
                else os << " " << std::setprecision(4) << n;
            }
        }
        os << "\n";
    }
}

void print_graph(const Tensor& root, std::ostream& os) {
    auto order = topo_order(root.impl_ptr());
    int i = 0;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const auto& impl = *it;
        if (!impl->grad_fn) continue;
        os << i++ << ": " << impl->grad_fn->op << "(";
        for (size_t j = 0; j < impl->grad_fn->input_shapes.size(); ++j)
            os << (j ? ", " : "") << shape_str(impl->grad_fn->input_shapes[j]);
        os << ") -> " << shape_str(impl->shape);
        if (impl->grad) os << "  grad norm " << tensor_l2_norm(Tensor(impl->grad));
        os << "\n";
    }
}

GradHook clip_grad_hook(float max_norm) {
    return [max_norm](Tensor& g) {
        const double n = tensor_l2_norm(g);
        if (n > max_norm) backend(g.device()).unary(UnaryOp::MulScalar, g.f32(), g.f32(), g.numel(),
                                                    static_cast<float>(max_norm / n), 0.f);
    };
}

GradHook nan_check_hook(const std::string& what) {
    return [what](Tensor& g) {
        const int64_t bad = backend(g.device()).count_nonfinite(g.f32(), g.numel());
        if (bad) throw AutogradError("non-finite gradient for " + what + ": " + std::to_string(bad) + " of " +
                                     std::to_string(g.numel()) + " elements are NaN or Inf");
    };
}

}  // namespace cw
