#pragma once
// NumPy .npy files (format versions 1, 2 and 3): magic "\x93NUMPY", version, header length, a Python dict literal
// {'descr': '|u1', 'fortran_order': False, 'shape': (N, 32, 32, 3)}, then the raw elements. CIFAR-10-C ships
// its images and labels this way.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cw::data {

struct NpyHeader {
    std::string descr;          // as written, e.g. "|u1", "<i8"
    char kind = 0;              // 'u' unsigned, 'i' signed, 'b' bool, 'f' float
    int item_size = 0;          // bytes per element
    bool fortran_order = false;
    std::vector<int64_t> shape;
    size_t data_offset = 0;     // where the elements start in the file

    int64_t numel() const;
    uint64_t data_bytes() const { return uint64_t(numel()) * item_size; }
};

// Parses the header. `data` must hold at least the header (the elements may be absent, so a loader can read
// just a slice of a large file). Throws DataError naming `source` on a bad magic, unsupported version or dtype,
// big-endian data, or a malformed dict.
NpyHeader parse_npy_header(const uint8_t* data, size_t size, const std::string& source);

// Bytes a file must have for this header: data_offset + data_bytes() (parse_npy_header bounds it below 2^63).
uint64_t npy_expected_file_size(const NpyHeader& h);

struct NpyArray {
    NpyHeader header;
    std::vector<uint8_t> data;  // little-endian elements, data_bytes() long
};

// A whole .npy file in memory; the payload must match the header exactly (truncated or trailing data throws).
NpyArray parse_npy(const uint8_t* data, size_t size, const std::string& source);

// `count` elements starting at `payload`, converted to int64. Integer and bool dtypes convert exactly; float
// dtypes must hold whole numbers. Throws otherwise.
std::vector<int64_t> npy_to_int64(const NpyHeader& h, const uint8_t* payload, int64_t count,
                                  const std::string& source);

}  // namespace cw::data
