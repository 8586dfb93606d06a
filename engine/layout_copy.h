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

// Offers, while alive, `copy` (may be null) as the copy of the input at `data`.
class Offer {
public:
    Offer(const float* data, std::shared_ptr<const LayoutCopy> copy);
    ~Offer();
    Offer(const Offer&) = delete;
    Offer& operator=(const Offer&) = delete;

private:
    const float* previous_data_;
    std::shared_ptr<const LayoutCopy> previous_copy_;
};

// For kernels: the copy offered on this thread for the input at `data`, or null.
const LayoutCopy* offered(const float* data);

}  // namespace layout_copy
}  // namespace cw
