// fuzz-sources: datasets/mat.cpp datasets/inflate.cpp
// parse_mat() must turn any input into a MatFile or a DataError, including zlib-compressed elements (capped at
// 64 MiB inflated). Every variable it returns must have a real part that fills its dimensions and must convert
// (or fail cleanly) with mat_to_int64() / mat_to_uint8().
#include <cstdint>
#include <cstdlib>

#include "datasets/error.h"
#include "datasets/mat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const cw::data::MatFile f = cw::data::parse_mat(data, size, "fuzz.mat", size_t(64) << 20);
        for (const auto& v : f.variables) {
            if (!v.storage || v.offset + v.bytes > v.storage->size()) std::abort();
            if (uint64_t(v.numel()) * cw::data::mat_type_size(v.data_type) != v.bytes) std::abort();
            try {
                if (v.numel() < (1 << 20)) {
                    cw::data::mat_to_int64(v, "fuzz.mat");
                    cw::data::mat_to_uint8(v, "fuzz.mat");
                }
            } catch (const cw::data::DataError&) {
            }
        }
    } catch (const cw::data::DataError&) {
    }
    return 0;
}
