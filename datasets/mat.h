#pragma once
// MATLAB Level 5 MAT-files (the format of SVHN's train_32x32.mat / test_32x32.mat; MATLAB v6 and v7 write it
// too): a 128-byte header, then tagged data elements, each either a miMATRIX or a zlib-compressed
// (miCOMPRESSED) element holding one. We read the numeric matrices and skip everything else (cells, structs,
// strings, sparse). v7.3 files are HDF5 and are rejected with a message saying so; big-endian files too.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace cw::data {

// Data element types used in MAT v5 files.
enum MatType : int {
    miINT8 = 1, miUINT8 = 2, miINT16 = 3, miUINT16 = 4, miINT32 = 5, miUINT32 = 6, miSINGLE = 7, miDOUBLE = 9,
    miINT64 = 12, miUINT64 = 13, miMATRIX = 14, miCOMPRESSED = 15, miUTF8 = 16, miUTF16 = 17, miUTF32 = 18
};
// Array classes (the class MATLAB reports); numeric ones are 6..15.
enum MatClass : int {
    mxDOUBLE_CLASS = 6, mxSINGLE_CLASS = 7, mxINT8_CLASS = 8, mxUINT8_CLASS = 9, mxINT16_CLASS = 10,
    mxUINT16_CLASS = 11, mxINT32_CLASS = 12, mxUINT32_CLASS = 13, mxINT64_CLASS = 14, mxUINT64_CLASS = 15
};

// Bytes per element of a numeric data type, 0 for non-numeric types.
int mat_type_size(int mi_type);

struct MatVariable {
    std::string name;
    int mx_class = 0;
    std::vector<int64_t> dims;  // MATLAB order: column-major, first index fastest
    // Type the real part is stored as. MATLAB may store a class in a smaller type (a double array of small
    // integers as miUINT8), so this can differ from mx_class.
    int data_type = 0;
    // The real part's bytes live in a shared buffer (the inflated element for compressed variables, so a 200 MB
    // image array is not copied again).
    std::shared_ptr<const std::vector<uint8_t>> storage;
    size_t offset = 0;
    size_t bytes = 0;

    const uint8_t* data() const { return storage->data() + offset; }
    int64_t numel() const;
};

struct MatFile {
    std::vector<MatVariable> variables;
    const MatVariable* find(const std::string& name) const;  // nullptr if absent
};

// Parses a whole MAT file held in memory. Throws DataError naming `source` on a bad header, a truncated or
// malformed element, corrupt compressed data, or a compressed element that would inflate past
// `max_inflated_bytes` (a guard for untrusted input).
MatFile parse_mat(const uint8_t* data, size_t size, const std::string& source,
                  size_t max_inflated_bytes = std::numeric_limits<size_t>::max());

// The variable's values as int64 (any numeric storage type; floats must be whole numbers) or as uint8 (values
// must lie in [0, 255]). Throw DataError naming `source` and the variable otherwise.
std::vector<int64_t> mat_to_int64(const MatVariable& v, const std::string& source);
std::vector<uint8_t> mat_to_uint8(const MatVariable& v, const std::string& source);

}  // namespace cw::data
