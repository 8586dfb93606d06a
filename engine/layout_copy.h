// A copy of an activation in another layout, written by the kernel that wrote the activation, so that the kernel
// reading it next takes the copy instead of converting the activation again: on the CPU, the bf16 nChw16c copy a
// conv2d_relu (and conv2d_relu_maxpool) output kernel writes beside its fp32 output, which the next bf16 convolution
// reads in place of its own conversion (engine/cpu/onednn_conv.cpp).
// The copy lives with the activation's storage (Storage::layout_copy) and every write access to the storage drops it
// (Tensor::f32(), data(), i32(), copy_from, fill_: engine/tensor.cpp), so it never describes values other than the
// storage's own. It changes no number: a kernel offered a copy reads exactly the bits it would have converted.
// Handing a copy over goes through scopes on the calling thread, keyed by the activation's address, so the backend
// interface is the same on every device (a backend that ignores them loses nothing but the saving): an op opens a
// Request around the backend call that writes its output and an Offer around each call that reads its input.
#pragma once

#include <memory>

namespace cw {

// What a backend stores as a copy; only the backend that wrote it knows its type.
struct LayoutCopy {
    virtual ~LayoutCopy() = default;
};

namespace layout_copy {

// Asks, while alive, for a copy of the output at `out`; take() returns what a kernel put for it (or null).
class Request {
public:
    explicit Request(const float* out);
    ~Request();
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;
    std::shared_ptr<const LayoutCopy> take();

private:
    const float* previous_out_;
    std::shared_ptr<const LayoutCopy> previous_copy_;
};

// For kernels: whether a copy of `out` is asked for on this thread, and handing it in.
bool requested(const float* out);
void put(const float* out, std::shared_ptr<const LayoutCopy> copy);

// Where an input's copy lives: its storage's Storage::layout_copy.
using Slot = std::shared_ptr<const LayoutCopy>;

// Offers, while alive, the copy in `*slot` (may be empty) as the copy of the input at `data`. Offers nest (a
// convolution offers its input and its weights at once): up to four per thread, the innermost looked at first; one
// beyond them is not made, and the kernel converts as it would without copies.
// With `keep` (a convolution's weights), a kernel that converts the input anyway may also leave its conversion in the
// slot for later calls to read, while a KeepScope is open (below).
class Offer {
public:
    Offer(const float* data, const Slot* slot);
    Offer(const float* data, std::shared_ptr<Slot> keep);
    ~Offer();
    Offer(const Offer&) = delete;
    Offer& operator=(const Offer&) = delete;

private:
    bool held_;
};

// For kernels: the copy offered on this thread for the input at `data`, or null.
const LayoutCopy* offered(const float* data);
// For kernels: whether a conversion of the input at `data` may be kept (offered with `keep`, a KeepScope open), and
// keeping `copy` (which replaces what its slot held, and must hold it too). keep() does nothing where not keepable.
bool keepable(const float* data);
void keep(const float* data, std::shared_ptr<const LayoutCopy> copy);

// While alive on this thread, conversions of inputs offered with `keep` are kept, and when the outermost scope ends
// every one kept in it is dropped. Kept weights are read again only inside the scope, so the scope is a promise:
// while it is open, parameters are written only through a fresh write access (Tensor::f32(), data(), copy_from,
// fill_, each of which drops what was kept), never through a pointer taken before a later op call. The trainer's
// step and an evaluation open one (PyTorch's autocast keeps its bf16 weights for one autocast region likewise);
// code outside any scope, a finite-difference check writing through a held pointer say, never meets a kept one.
class KeepScope {
public:
    KeepScope();
    ~KeepScope();
    KeepScope(const KeepScope&) = delete;
    KeepScope& operator=(const KeepScope&) = delete;
};

}  // namespace layout_copy
}  // namespace cw
