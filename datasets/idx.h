#pragma once
// IDX, the container of MNIST and Fashion-MNIST: 2 zero bytes, an element-type byte, a rank byte, one big-endian
// uint32 per dimension, then the elements. Only unsigned bytes (type 0x08) occur in those datasets.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cw::data {

struct IdxArray {
    std::vector<int64_t> dims;
    std::vector<uint8_t> values;  // row-major, size = product(dims)
};

// Parses an uncompressed IDX file held in memory. Throws DataError naming `source` on a wrong magic, an element
// type other than ubyte, or a size that does not match the header (truncated or trailing bytes).
IdxArray parse_idx(const uint8_t* data, size_t size, const std::string& source);

}  // namespace cw::data
