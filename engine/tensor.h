#pragma once
// Tensor: a shared handle to contiguous NCHW storage on one device, plus the autograd bookkeeping
// (requires_grad, .grad, the node that produced it). Copying a Tensor copies the handle, not the data.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/device.h"
#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/shape.h"

namespace cw {

class Tensor;
struct Node;

struct LayoutCopy;

// Raw memory on one device; freed through that device's backend.
struct Storage {
    void* data = nullptr;
    size_t bytes = 0;
    Device device;
    // The data in another layout, written beside it by the kernel that wrote it (engine/layout_copy.h); dropped by
    // every write access (writable()).
    std::shared_ptr<const LayoutCopy> layout_copy;
    void* writable() {
        layout_copy.reset();
        return data;
    }
    Storage(size_t bytes, Device device);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
};

// Called with a tensor's complete gradient during backward; may modify it in place (clip) or only inspect it
// (log, NaN check). For leaves it is called once the pass has accumulated into .grad.
using GradHook = std::function<void(Tensor& grad)>;

struct TensorImpl {
    Shape shape;
    DType dtype = DType::F32;
    std::shared_ptr<Storage> storage;
    bool requires_grad = false;
    bool is_parameter = false;          // parameters stop receiving gradients inside an InputGradOnly scope
    bool retain_grad = false;           // keep the gradient of a non-leaf after backward
    bool graph_released = false;        // its graph was freed by a backward pass
    std::shared_ptr<TensorImpl> grad;   // accumulated gradient (same shape, device)
    std::shared_ptr<Node> grad_fn;      // the op that produced this tensor, if recorded
    std::vector<GradHook> hooks;
    std::string name;
};

class Tensor {
public:
    Tensor() = default;
    explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

    // ---- creation -------------------------------------------------------------------------------------
    static Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
    static Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
    static Tensor full(const Shape& shape, float value, Device device = Device::cpu());
    static Tensor ones(const Shape& shape, Device device = Device::cpu()) { return full(shape, 1.f, device); }
    static Tensor scalar(float value, Device device = Device::cpu()) { return full({}, value, device); }
    static Tensor from_vector(const std::vector<float>& values, const Shape& shape, Device device = Device::cpu());
    static Tensor from_labels(const std::vector<int32_t>& labels, Device device = Device::cpu());
    static Tensor from_ints(const std::vector<int32_t>& values, const Shape& shape, Device device = Device::cpu());
    static Tensor empty_like(const Tensor& t) { return empty(t.shape(), t.dtype(), t.device()); }
    static Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype(), t.device()); }

    // ---- metadata --------------------------------------------------------------------------------------
    bool defined() const { return impl_ != nullptr; }
    const Shape& shape() const { return impl().shape; }
    int ndim() const { return static_cast<int>(impl().shape.size()); }
    int64_t size(int dim) const;          // negative dims count from the end
    int64_t numel() const { return shape_numel(impl().shape); }
    DType dtype() const { return impl().dtype; }
    Device device() const { return impl().storage->device; }
    const std::string& name() const { return impl().name; }
    Tensor& set_name(const std::string& n) { impl().name = n; return *this; }
    std::string describe() const;         // "float32[128, 10] cpu"

    // ---- data access -----------------------------------------------------------------------------------
    // Typed pointer to the storage on whatever device it lives (for kernels). Checks the dtype.
    float* f32();
    const float* f32() const;
    int32_t* i32();
    const int32_t* i32() const;
    // Host access: throws if the tensor is not on the CPU.
    float* data();
    const float* data() const;
    std::vector<float> to_vector() const;          // any device, copies to host
    std::vector<int32_t> to_int_vector() const;
    float item() const;                            // one-element tensor -> float
    float at(const std::vector<int64_t>& index) const;

    // ---- copies and devices ----------------------------------------------------------------------------
    Tensor to(Device device) const;     // a copy on `device` (a new leaf; gradients do not flow across `to`)
    Tensor clone() const;               // a deep copy without autograd history
    Tensor detach() const;              // shares storage, no history, no requires_grad
    void copy_from(const Tensor& src);  // in-place data copy, shapes must match (any devices)
    void fill_(float value);
    void zero_() { fill_(0.f); }
    bool shares_storage_with(const Tensor& other) const { return impl().storage == other.impl().storage; }

    // ---- autograd --------------------------------------------------------------------------------------
    bool requires_grad() const { return impl().requires_grad; }
    Tensor& set_requires_grad(bool on = true);
    bool is_leaf() const { return impl().grad_fn == nullptr; }
    Tensor grad() const;                 // undefined Tensor if no gradient yet
    void set_grad(const Tensor& g);
    void zero_grad();                    // drops the gradient buffer
    Tensor& retain_grad() { impl().retain_grad = true; return *this; }
    Tensor& mark_parameter() { impl().is_parameter = true; return set_requires_grad(true); }
    bool is_parameter() const { return impl().is_parameter; }
    void register_hook(GradHook hook) { impl().hooks.push_back(std::move(hook)); }
    // Reverse-mode pass from this scalar: accumulates into .grad of every leaf that requires grad, then frees
    // the graph (unless retain_graph). Throws if the tensor is not a scalar or does not require grad.
    void backward(bool retain_graph = false) const;

    TensorImpl& impl() const {
        if (!impl_) throw Error("use of an undefined Tensor");
        return *impl_;
    }
    const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

private:
    std::shared_ptr<TensorImpl> impl_;
};

}  // namespace cw
