#include "nn/tensor_records.h"

#include <limits>

namespace cw::nn {

namespace {
bool is_float(st::DType d) {
    return d == st::DType::F32 || d == st::DType::F16 || d == st::DType::BF16 || d == st::DType::F64;
}
bool is_int(st::DType d) { return d == st::DType::I32 || d == st::DType::I64; }

std::vector<int32_t> ints_from_record(const st::TensorRecord& r, const std::string& context) {
    const size_t size = st::dtype_size(r.dtype);
    const size_t n = r.bytes.size() / size;
    std::vector<int32_t> out(n);
    for (size_t i = 0; i < n; ++i) {
        if (r.dtype == st::DType::I32) {
            out[i] = static_cast<int32_t>(static_cast<uint32_t>(st::load_le(&r.bytes[i * 4], 4)));
            continue;
        }
        const auto v = static_cast<int64_t>(st::load_le(&r.bytes[i * 8], 8));
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
            throw st::FormatError(context + ": integer " + std::to_string(v) + " does not fit in int32");
        out[i] = static_cast<int32_t>(v);
    }
    return out;
}

// The record's values as a CPU tensor of `shape` (same element count).
Tensor make_tensor(const st::TensorRecord& r, const Shape& shape, const std::string& context) {
    if (is_float(r.dtype)) return Tensor::from_vector(st::to_f32(r, context), shape);
    if (is_int(r.dtype)) return Tensor::from_ints(ints_from_record(r, context), shape);
    throw st::FormatError(context + ": dtype " + st::dtype_name(r.dtype) +
                          " is not supported here (expected F32, F16, BF16, F64, I32 or I64)");
}
}  // namespace

st::TensorRecord record_from_tensor(const Tensor& t) {
    if (t.dtype() == DType::F32) return st::from_f32(t.to_vector(), t.shape());
    const std::vector<int32_t> v = t.to_int_vector();
    if (t.ndim() == 0) return st::from_i64_scalar(v.at(0));
    st::TensorRecord r;
    r.dtype = st::DType::I32;
    r.shape = t.shape();
    r.bytes.resize(v.size() * 4);
    for (size_t i = 0; i < v.size(); ++i) st::store_le(&r.bytes[i * 4], static_cast<uint32_t>(v[i]), 4);
    return r;
}

Tensor tensor_from_record(const st::TensorRecord& r, const std::string& context) {
    return make_tensor(r, r.shape, context);
}

std::string record_mismatch(const st::TensorRecord& r, const Tensor& target) {
    const bool want_float = target.dtype() == DType::F32;
    if (want_float ? !is_float(r.dtype) : !is_int(r.dtype))
        return std::string("dtype ") + st::dtype_name(r.dtype) + ", expected " + (want_float ? "a float type" : "I64 or I32");
    // An integer scalar may be stored as [] or [1] (some exporters write 1-element tensors).
    const bool scalar_ok = !want_float && target.ndim() == 0 && r.shape.size() <= 1 &&
                           st::numel(r.shape, "record") == 1;
    if (r.shape != target.shape() && !scalar_ok)
        return "shape " + shape_str(r.shape) + ", expected " + shape_str(target.shape());
    return "";
}

void copy_record_into(const st::TensorRecord& r, Tensor& target, const std::string& context) {
    target.copy_from(make_tensor(r, target.shape(), context));
}

st::TensorRecord record_from_u64(const std::vector<uint64_t>& words) {
    st::TensorRecord r;
    r.dtype = st::DType::U64;
    r.shape = {static_cast<int64_t>(words.size())};
    r.bytes.resize(words.size() * 8);
    for (size_t i = 0; i < words.size(); ++i) st::store_le(&r.bytes[i * 8], words[i], 8);
    return r;
}

std::vector<uint64_t> u64_from_record(const st::TensorRecord& r, const std::string& context) {
    if ((r.dtype != st::DType::U64 && r.dtype != st::DType::I64) || r.shape.size() != 1)
        throw st::FormatError(context + ": expected a 1-d U64 tensor, got " + st::dtype_name(r.dtype) + " " +
                              shape_str(r.shape));
    std::vector<uint64_t> out(r.bytes.size() / 8);
    for (size_t i = 0; i < out.size(); ++i) out[i] = st::load_le(&r.bytes[i * 8], 8);
    return out;
}

}  // namespace cw::nn
