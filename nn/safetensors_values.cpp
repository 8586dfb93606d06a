// The values of a safetensors record (nn/safetensors.h): floats and integers to and from the little-endian bytes
// of the format, with F16 / BF16 / F64 read as F32 and every count and range checked. The file format itself (its
// header, reading and writing) is nn/safetensors.cpp.
#include "nn/safetensors.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace cw::st {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
    throw FormatError(where + ": " + what);
}

float half_to_float(uint16_t h) {
    const int exp = (h >> 10) & 0x1F;
    const int mant = h & 0x3FF;
    float v;
    if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal
    else if (exp == 31) v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
    return (h & 0x8000) ? -v : v;
}

float bits_to_float(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

}  // namespace

TensorRecord from_f32(const std::vector<float>& values, const std::vector<int64_t>& shape) {
    TensorRecord t;
    t.dtype = DType::F32;
    t.shape = shape;
    const uint64_t n = numel(shape, "from_f32");
    if (n != values.size())
        throw ShapeError("from_f32: shape has " + std::to_string(n) + " elements but " +
                         std::to_string(values.size()) + " values were given");
    t.bytes.resize(values.size() * 4);
    for (size_t i = 0; i < values.size(); ++i) {
        uint32_t bits;
        std::memcpy(&bits, &values[i], 4);
        store_le(&t.bytes[i * 4], bits, 4);
    }
    return t;
}

namespace {
// Calls f(i, value) for every value of a float record read as F32 (F16 / BF16 / F64 converted), with the dtype
// switch outside the loops: to_f32 and count_nonfinite decode the same way and neither copies twice.
template <class F>
void for_each_f32(const TensorRecord& t, const std::string& context, F f) {
    const uint64_t n = numel(t.shape, context);
    if (t.bytes.size() != byte_count(t, context))
        fail(context, "has " + std::to_string(t.bytes.size()) + " bytes, inconsistent with its " +
                          dtype_name(t.dtype) + " shape");
    const uint8_t* p = t.bytes.data();
    switch (t.dtype) {
    case DType::F32:
        for (size_t i = 0; i < n; ++i) f(i, bits_to_float(static_cast<uint32_t>(load_le(p + 4 * i, 4))));
        break;
    case DType::F16:
        for (size_t i = 0; i < n; ++i) f(i, half_to_float(static_cast<uint16_t>(load_le(p + 2 * i, 2))));
        break;
    case DType::BF16:  // the top half of an IEEE float
        for (size_t i = 0; i < n; ++i) f(i, bits_to_float(static_cast<uint32_t>(load_le(p + 2 * i, 2)) << 16));
        break;
    case DType::F64:
        for (size_t i = 0; i < n; ++i) {
            const uint64_t bits = load_le(p + 8 * i, 8);
            double d;
            std::memcpy(&d, &bits, 8);
            f(i, static_cast<float>(d));
        }
        break;
    default:
        fail(context, std::string("has dtype ") + dtype_name(t.dtype) + ", expected F32, F16, BF16 or F64");
    }
}
}  // namespace

std::vector<float> to_f32(const TensorRecord& t, const std::string& context) {
    std::vector<float> out(numel(t.shape, context));
    for_each_f32(t, context, [&out](size_t i, float v) { out[i] = v; });
    return out;
}

uint64_t count_nonfinite(const TensorRecord& t, const std::string& context) {
    if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16 && t.dtype != DType::F64) return 0;
    uint64_t bad = 0;
    for_each_f32(t, context, [&bad](size_t, float v) { bad += !std::isfinite(v); });
    return bad;
}

namespace {
template <class Int>
TensorRecord from_ints(const std::vector<Int>& values, const std::vector<int64_t>& shape, DType dtype) {
    TensorRecord t;
    t.dtype = dtype;
    t.shape = shape;
    const uint64_t n = numel(shape, "integer tensor");
    if (n != values.size())
        throw ShapeError(std::string(dtype_name(dtype)) + " tensor: shape has " + std::to_string(n) +
                         " elements but " + std::to_string(values.size()) + " values were given");
    t.bytes.resize(values.size() * sizeof(Int));
    for (size_t i = 0; i < values.size(); ++i)
        store_le(t.bytes.data() + i * sizeof(Int), static_cast<uint64_t>(values[i]), static_cast<int>(sizeof(Int)));
    return t;
}
}  // namespace

TensorRecord from_i32(const std::vector<int32_t>& values, const std::vector<int64_t>& shape) {
    return from_ints(values, shape, DType::I32);
}

TensorRecord from_i64(const std::vector<int64_t>& values, const std::vector<int64_t>& shape) {
    return from_ints(values, shape, DType::I64);
}

std::vector<int64_t> to_i64(const TensorRecord& t, const std::string& context) {
    if (t.dtype != DType::I64 && t.dtype != DType::I32)
        fail(context, std::string("has dtype ") + dtype_name(t.dtype) + ", expected I32 or I64");
    const size_t width = dtype_size(t.dtype);
    const uint64_t n = numel(t.shape, context);
    if (t.bytes.size() != n * width) fail(context, "holds " + std::to_string(t.bytes.size()) + " bytes for " + std::to_string(n) + " values");
    std::vector<int64_t> out(n);
    for (size_t i = 0; i < n; ++i) {
        const uint64_t raw = load_le(t.bytes.data() + i * width, static_cast<int>(width));
        out[i] = width == 4 ? static_cast<int32_t>(static_cast<uint32_t>(raw)) : static_cast<int64_t>(raw);
    }
    return out;
}

std::vector<int32_t> to_i32(const TensorRecord& t, const std::string& context) {
    const std::vector<int64_t> wide = to_i64(t, context);
    std::vector<int32_t> out(wide.size());
    for (size_t i = 0; i < wide.size(); ++i) {
        if (wide[i] < INT32_MIN || wide[i] > INT32_MAX)
            fail(context, "value " + std::to_string(wide[i]) + " at " + std::to_string(i) + " does not fit in 32 bits");
        out[i] = static_cast<int32_t>(wide[i]);
    }
    return out;
}

TensorRecord from_i64_scalar(int64_t value) { return from_i64({value}, {}); }

int64_t to_i64_scalar(const TensorRecord& t, const std::string& context) {
    if (t.dtype != DType::I64 && t.dtype != DType::I32)
        fail(context, std::string("has dtype ") + dtype_name(t.dtype) + ", expected an I64 scalar");
    if (numel(t.shape, context) != 1 || t.bytes.size() != dtype_size(t.dtype))
        fail(context, "expected a single integer (shape [] or [1])");
    return to_i64(t, context).front();
}

}  // namespace cw::st
