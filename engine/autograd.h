#pragma once
// Reverse-mode autodiff on a dynamic tape. Each op that sees an input needing a gradient records a Node on its
// output; Tensor::backward() walks the nodes from the loss in reverse topological order and accumulates
// gradients into the leaves. Scopes switch recording off (NoGrad) or keep it only for inputs (InputGradOnly:
// the attack step, which skips every weight-gradient GEMM).
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "engine/debug.h"
#include "engine/tensor.h"

namespace cw {

// ---- grad modes -----------------------------------------------------------------------------------------
bool grad_enabled();
bool param_grad_enabled();

class NoGradGuard {  // evaluation: nothing is recorded
public:
    NoGradGuard();
    ~NoGradGuard();
private:
    bool prev_;
};

// attacks: gradients reach inputs, never parameters. Recording is on inside it even within a NoGradGuard, so an
// attack's bookkeeping can run without a graph around its gradient passes.
class InputGradOnlyGuard {
public:
    InputGradOnlyGuard();
    ~InputGradOnlyGuard();
private:
    bool prev_, prev_grad_;
};

// Does `t` need a gradient in the current mode?
bool needs_grad(const Tensor& t);
bool any_needs_grad(std::initializer_list<const Tensor*> ts);

// ---- nodes --------------------------------------------------------------------------------------------------
class GradSink;
using BackwardFn = std::function<void(const Tensor& grad_out, GradSink& sink)>;

struct Node {
    std::string op;
    std::vector<Tensor> inputs;       // undefined where that input needs no gradient (nothing kept alive)
    std::vector<Shape> input_shapes;
    Shape output_shape;
    BackwardFn backward;
    long tape_entry = -1;             // index in the active TapeRecorder, if any
};

// Receives an op's input gradients during backward and accumulates them into those inputs.
class GradSink {
public:
    explicit GradSink(Node& node) : node_(node) {}
    bool needs(size_t i) const { return i < node_.inputs.size() && node_.inputs[i].defined(); }
    // Accumulates g into input i's gradient. Pass a temporary (std::move) to let it adopt the buffer.
    void add(size_t i, Tensor g);
    const std::vector<double>& norms() const { return norms_; }
private:
    Node& node_;
    std::vector<double> norms_;
};

// Records `out` as produced by `op` from `inputs` if any input needs a gradient. Returns whether it recorded.
bool record(Tensor& out, const char* op, const std::vector<Tensor>& inputs, BackwardFn fn);

// The reverse pass behind Tensor::backward().
void run_backward(const Tensor& root, bool retain_graph);

// ---- inspection ---------------------------------------------------------------------------------------------
// While alive, every recorded op is listed (op, input and output shapes) and, after backward, the gradient norms
// that flowed through it. For teaching and auditing a single step.
class TapeRecorder {
public:
    struct Entry {
        std::string op;
        std::vector<Shape> input_shapes;
        Shape output_shape;
        double grad_out_norm = -1;             // -1: backward has not reached this node
        std::vector<double> grad_in_norms;     // -1 for inputs that needed no gradient
    };
    TapeRecorder();
    ~TapeRecorder();
    const std::vector<Entry>& entries() const { return entries_; }
    void print(std::ostream& os) const;
    long add(const Node& n);
    Entry& entry(long i) { return entries_.at(static_cast<size_t>(i)); }
    static TapeRecorder* active();
private:
    std::vector<Entry> entries_;
    TapeRecorder* prev_;
};

// Prints the graph reachable from `root` (before backward frees it): one line per node in topological order.
void print_graph(const Tensor& root, std::ostream& os);

// Ready-made hooks.
GradHook clip_grad_hook(float max_norm);   // rescales the gradient to at most max_norm (L2)
GradHook nan_check_hook(const std::string& what);   // throws AutogradError naming `what` on a NaN/Inf gradient

double tensor_l2_norm(const Tensor& t);

}  // namespace cw
