#pragma once
// safetensors checkpoints (docs/protocols/safetensors.md), on raw bytes so that loading and saving do
// not depend on the engine's Tensor. Files come from the internet, so parse() treats every byte as hostile:
// anything malformed is a FormatError naming the file, never a crash or an oversized allocation.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/error.h"

namespace cw::st {

// The file's content is wrong (truncated, bad header, inconsistent offsets, unsupported dtype...).
struct FormatError : Error {
    using Error::Error;
};
// The operating system refused (missing file, unwritable directory, disk full...).
struct IoError : Error {
    using Error::Error;
};

enum class DType { BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64 };

size_t dtype_size(DType d);
const char* dtype_name(DType d);  // as spelled in the header: "F32", "BF16", ...
// `context` starts the error message, e.g. "model.safetensors: tensor 'conv1.weight'".
DType parse_dtype(const std::string& name, const std::string& context);

struct TensorRecord {
    DType dtype = DType::F32;
    std::vector<int64_t> shape;  // [] is a scalar
    std::vector<uint8_t> bytes;  // little-endian, row-major, exactly numel * dtype_size bytes
};

struct File {
    std::map<std::string, std::string> metadata;
    std::map<std::string, TensorRecord> tensors;
};

inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// Validates everything docs/protocols/safetensors.md §1 requires; `source_name` (usually the path) starts every error message.
File parse(const uint8_t* data, size_t size, const std::string& source_name);
File read_file(const std::string& path);
// Only the header's __metadata__ (read without the tensor data, so a file truncated in its data still answers).
std::map<std::string, std::string> read_metadata(const std::string& path);

// Header keys: "__metadata__" first when non-empty, then tensors by name, data in that same order; header
// padded with spaces to a multiple of 8. Throws FormatError if a record's bytes do not match its shape.
std::vector<uint8_t> serialize(const File& file, const std::string& dest_name = "safetensors output");
// Atomic: writes path + ".tmp.<pid>", fsyncs, renames over `path`; on failure the temp file is removed.
void write_file(const std::string& path, const File& file);

// Number of elements; throws FormatError on a negative dimension or overflow.
uint64_t numel(const std::vector<int64_t>& shape, const std::string& context);
// numel * dtype_size, overflow-checked the same way.
uint64_t byte_count(const TensorRecord& t, const std::string& context);

TensorRecord from_f32(const std::vector<float>& values, const std::vector<int64_t>& shape);
// F32, and F16 / BF16 / F64 converted (PyTorch checkpoints are often saved in half precision).
std::vector<float> to_f32(const TensorRecord& t, const std::string& context = "tensor");

// How many values of a float record (F32, F16, BF16, F64) are NaN or infinite once read as F32 (an F64 beyond
// the float range counts); 0 for other dtypes.
uint64_t count_nonfinite(const TensorRecord& t, const std::string& context = "tensor");

// Integer tensors (labels, dataset indices), little-endian whatever the host. to_i32 / to_i64 accept I32 or I64
// and throw FormatError when a value does not fit.
TensorRecord from_i32(const std::vector<int32_t>& values, const std::vector<int64_t>& shape);
TensorRecord from_i64(const std::vector<int64_t>& values, const std::vector<int64_t>& shape);
std::vector<int32_t> to_i32(const TensorRecord& t, const std::string& context = "tensor");
std::vector<int64_t> to_i64(const TensorRecord& t, const std::string& context = "tensor");

// BatchNorm's num_batches_tracked: an I64 scalar, shape [].
TensorRecord from_i64_scalar(int64_t value);
// Accepts I64 or I32 holding exactly one element (shape [] or [1]).
int64_t to_i64_scalar(const TensorRecord& t, const std::string& context = "tensor");

// Drops leading "module." / "model." (DataParallel and wrapper checkpoints), repeatedly.
std::string strip_prefixes(const std::string& name);

// Little-endian integers of 1..8 bytes (the file format's byte order, independent of the host's).
uint64_t load_le(const uint8_t* p, int nbytes);
void store_le(uint8_t* p, uint64_t v, int nbytes);

}  // namespace cw::st
