// fuzz-sources: datasets/idx.cpp datasets/inflate.cpp
// parse_idx() must turn any input into an IdxArray or a DataError, also after gunzip (MNIST ships .gz files).
// An accepted array must be consistent with its header; anything else (crash, sanitizer report, other
// exception, runaway allocation) is a finding.
#include <cstdint>
#include <cstdlib>

#include "datasets/error.h"
#include "datasets/idx.h"
#include "datasets/inflate.h"

namespace {
void check_idx(const uint8_t* data, size_t size) {
    try {
        const cw::data::IdxArray a = cw::data::parse_idx(data, size, "fuzz.idx");
        uint64_t n = 1;
        for (int64_t d : a.dims) n *= uint64_t(d);
        if (n != a.values.size() || a.dims.empty() || a.dims.size() > 4) std::abort();
    } catch (const cw::data::DataError&) {
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    check_idx(data, size);
    if (cw::data::is_gzip(data, size)) {
        try {
            const std::vector<uint8_t> raw =
                cw::data::inflate_all(data, size, cw::data::ZFormat::Gzip, "fuzz.gz", 1 << 22);
            check_idx(raw.data(), raw.size());
        } catch (const cw::data::DataError&) {
        }
    }
    return 0;
}
