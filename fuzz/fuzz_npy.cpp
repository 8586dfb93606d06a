// fuzz-sources: datasets/npy.cpp
// parse_npy() and parse_npy_header() must turn any input into a header/array or a DataError; an accepted array's
// payload must match its header, and its elements must convert (or fail cleanly) with npy_to_int64().
#include <cstdint>
#include <cstdlib>

#include "datasets/error.h"
#include "datasets/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const cw::data::NpyHeader h = cw::data::parse_npy_header(data, size, "fuzz.npy");
        if (h.data_offset > size || h.item_size <= 0) std::abort();
    } catch (const cw::data::DataError&) {
    }
    try {
        const cw::data::NpyArray a = cw::data::parse_npy(data, size, "fuzz.npy");
        if (a.data.size() != a.header.data_bytes()) std::abort();
        const std::vector<int64_t> v = cw::data::npy_to_int64(a.header, a.data.data(), a.header.numel(), "fuzz.npy");
        if (int64_t(v.size()) != a.header.numel()) std::abort();
    } catch (const cw::data::DataError&) {
    }
    return 0;
}
