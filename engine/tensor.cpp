#include "engine/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "engine/autograd.h"
#include "engine/backend.h"

namespace cw {

Storage::Storage(size_t n_bytes, Device dev) : bytes(n_bytes), device(dev) {
    data = n_bytes ? backend(dev).allocate(n_bytes) : nullptr;
}

Storage::~Storage() {
    if (data) backend(device).deallocate(data, bytes);
}

namespace {
std::shared_ptr<TensorImpl> make_impl(const Shape& shape, DType dtype, Device device) {
    for (auto d : shape)
        if (d < 0) throw ShapeError("Tensor: negative dimension in shape " + shape_str(shape));
    auto impl = std::make_shared<TensorImpl>();
    impl->shape = shape;
    impl->dtype = dtype;
    impl->storage = std::make_shared<Storage>(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype), device);
    return impl;
}
}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
    Tensor t(make_impl(shape, dtype, device));
    // Debug poisoning: fresh buffers hold NaN so a kernel that forgets to write an element is caught by tests.
    if (poison_new_tensors() && dtype == DType::F32 && t.numel() > 0)
        backend(device).fill(t.f32(), std::numeric_limits<float>::quiet_NaN(), t.numel());
    return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
    Tensor t(make_impl(shape, dtype, device));
    if (t.numel() == 0) return t;
    if (dtype == DType::F32)
        backend(device).fill(t.f32(), 0.f, t.numel());
    else
        backend(device).fill_i32(t.i32(), 0, t.numel());
    return t;
}

Tensor Tensor::full(const Shape& shape, float value, Device device) {
    Tensor t(make_impl(shape, DType::F32, device));
    if (t.numel()) backend(device).fill(t.f32(), value, t.numel());
    return t;
}

Tensor Tensor::from_vector(const std::vector<float>& values, const Shape& shape, Device device) {
    if (static_cast<int64_t>(values.size()) != shape_numel(shape))
        throw ShapeError("Tensor::from_vector: " + std::to_string(values.size()) + " values do not fill shape " +
                         shape_str(shape));
    Tensor t(make_impl(shape, DType::F32, device));
    if (!values.empty()) backend(device).copy_from_host(t.f32(), values.data(), values.size() * sizeof(float));
    return t;
}

Tensor Tensor::from_ints(const std::vector<int32_t>& values, const Shape& shape, Device device) {
    if (static_cast<int64_t>(values.size()) != shape_numel(shape))
        throw ShapeError("Tensor::from_ints: " + std::to_string(values.size()) + " values do not fill shape " +
                         shape_str(shape));
    Tensor t(make_impl(shape, DType::I32, device));
    if (!values.empty()) backend(device).copy_from_host(t.i32(), values.data(), values.size() * sizeof(int32_t));
    return t;
}

Tensor Tensor::from_labels(const std::vector<int32_t>& labels, Device device) {
    return from_ints(labels, {static_cast<int64_t>(labels.size())}, device);
}

int64_t Tensor::size(int dim) const { return shape()[normalize_dim(dim, ndim(), "Tensor::size")]; }

std::string Tensor::describe() const {
    return std::string(dtype_name(dtype())) + shape_str(shape()) + " " + device().str();
}

// The writable accessors drop the storage's layout copy (engine/layout_copy.h): whoever may write the data makes the
// copy stale. The const ones read only.
const float* Tensor::f32() const {
    if (dtype() != DType::F32) throw Error("expected a float32 tensor, got " + describe());
    return static_cast<const float*>(impl().storage->data);
}
float* Tensor::f32() {
    if (dtype() != DType::F32) throw Error("expected a float32 tensor, got " + describe());
    return static_cast<float*>(impl().storage->writable());
}
const int32_t* Tensor::i32() const {
    if (dtype() != DType::I32) throw Error("expected an int32 tensor, got " + describe());
    return static_cast<const int32_t*>(impl().storage->data);
}
int32_t* Tensor::i32() {
    if (dtype() != DType::I32) throw Error("expected an int32 tensor, got " + describe());
    return static_cast<int32_t*>(impl().storage->writable());
}

const float* Tensor::data() const {
    if (!device().is_cpu()) throw DeviceError("host access to a tensor on " + device().str() + "; call .to(cpu) first");
    return f32();
}
float* Tensor::data() {
    if (!device().is_cpu()) throw DeviceError("host access to a tensor on " + device().str() + "; call .to(cpu) first");
    return f32();
}

std::vector<float> Tensor::to_vector() const {
    std::vector<float> out(static_cast<size_t>(numel()));
    if (!out.empty()) backend(device()).copy_to_host(out.data(), f32(), out.size() * sizeof(float));
    return out;
}

std::vector<int32_t> Tensor::to_int_vector() const {
    std::vector<int32_t> out(static_cast<size_t>(numel()));
    if (!out.empty()) backend(device()).copy_to_host(out.data(), i32(), out.size() * sizeof(int32_t));
    return out;
}

float Tensor::item() const {
    if (numel() != 1) throw ShapeError("item(): expected a one-element tensor, got " + describe());
    if (dtype() == DType::I32) return static_cast<float>(to_int_vector()[0]);
    return to_vector()[0];
}

float Tensor::at(const std::vector<int64_t>& index) const {
    if (static_cast<int>(index.size()) != ndim())
        throw ShapeError("at(): index of rank " + std::to_string(index.size()) + " for " + describe());
    int64_t flat = 0;
    for (int i = 0; i < ndim(); ++i) {
        if (index[i] < 0 || index[i] >= shape()[i]) throw ShapeError("at(): index out of range for " + describe());
        flat = flat * shape()[i] + index[i];
    }
    float v = 0;
    if (dtype() == DType::F32) {
        backend(device()).copy_to_host(&v, f32() + flat, sizeof(float));
    } else {
        int32_t iv;
        backend(device()).copy_to_host(&iv, i32() + flat, sizeof(int32_t));
        v = static_cast<float>(iv);
    }
    return v;
}

Tensor Tensor::to(Device dst) const {
    Tensor out(make_impl(shape(), dtype(), dst));
    const size_t bytes = impl().storage->bytes;
    if (bytes == 0) return out;
    const void* src = impl().storage->data;
    void* d = out.impl().storage->data;
    if (device() == dst) {
        backend(dst).copy(d, src, bytes);
    } else if (device().is_cpu()) {
        backend(dst).copy_from_host(d, src, bytes);
    } else if (dst.is_cpu()) {
        backend(device()).copy_to_host(d, src, bytes);
    } else {
        std::vector<char> staging(bytes);
        backend(device()).copy_to_host(staging.data(), src, bytes);
        backend(dst).copy_from_host(d, staging.data(), bytes);
    }
    return out;
}

Tensor Tensor::clone() const { return to(device()); }

Tensor Tensor::detach() const {
    auto impl2 = std::make_shared<TensorImpl>();
    impl2->shape = shape();
    impl2->dtype = dtype();
    impl2->storage = impl().storage;
    return Tensor(impl2);
}

void Tensor::copy_from(const Tensor& src) {
    if (src.shape() != shape() || src.dtype() != dtype())
        throw ShapeError("copy_from: source " + src.describe() + " does not match destination " + describe());
    Tensor moved = src.device() == device() ? src : src.to(device());
    if (impl().storage->bytes) backend(device()).copy(impl().storage->writable(), moved.impl().storage->data, impl().storage->bytes);
}

void Tensor::fill_(float value) {
    if (numel() == 0) return;
    if (dtype() == DType::F32)
        backend(device()).fill(f32(), value, numel());
    else
        backend(device()).fill_i32(i32(), static_cast<int32_t>(value), numel());
}

Tensor& Tensor::set_requires_grad(bool on) {
    if (on && dtype() != DType::F32) throw AutogradError("requires_grad on a non-float tensor " + describe());
    if (!is_leaf() && !on) throw AutogradError("set_requires_grad(false) on a non-leaf tensor; use detach()");
    impl().requires_grad = on;
    return *this;
}

Tensor Tensor::grad() const { return impl().grad ? Tensor(impl().grad) : Tensor(); }

void Tensor::set_grad(const Tensor& g) {
    if (!g.defined()) {
        impl().grad.reset();
        return;
    }
    if (g.shape() != shape() || g.device() != device())
        throw ShapeError("set_grad: gradient " + g.describe() + " does not match tensor " + describe());
    impl().grad = g.impl_ptr();
}

void Tensor::zero_grad() { impl().grad.reset(); }

void Tensor::backward(bool retain_graph) const { run_backward(*this, retain_graph); }

}  // namespace cw
