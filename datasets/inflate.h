#pragma once
// zlib decompression for the formats that carry compressed payloads (.gz IDX files, miCOMPRESSED MAT elements).
// Every call takes an output cap so a hostile or corrupt stream cannot make us allocate without bound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cw::data {

enum class ZFormat { Zlib, Gzip };

// zlib cannot expand data by more than about 1032:1; a header claiming more than this is lying.
inline size_t max_inflated_size(size_t compressed_bytes) { return compressed_bytes * 1032 + 1024; }

bool is_gzip(const uint8_t* data, size_t size);

// Decompresses one complete stream. Throws DataError (naming `source`) if the stream is corrupt, ends early, or
// would produce more than max_output bytes. `size_hint` only pre-sizes the buffer.
std::vector<uint8_t> inflate_all(const uint8_t* data, size_t size, ZFormat format, const std::string& source,
                                 size_t max_output, size_t size_hint = 0);

// The first `n` decompressed bytes (fewer if the stream is shorter); used to peek at a header before sizing the
// full output. Throws only if the stream is corrupt within those bytes.
std::vector<uint8_t> inflate_prefix(const uint8_t* data, size_t size, ZFormat format, const std::string& source,
                                    size_t n);

}  // namespace cw::data
