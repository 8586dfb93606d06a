// fuzz-sources: nn/safetensors.cpp nn/safetensors_values.cpp util/atomic_file.cpp
// parse() must turn any input into a File or a cw::Error. A File it accepts must survive serialize() and a
// second parse() unchanged; anything else (crash, sanitizer report, leak, other exception) is a finding.
#include <cstdint>
#include <cstdlib>

#include "nn/safetensors.h"

namespace {
bool same(const cw::st::File& a, const cw::st::File& b) {
    if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
    for (auto ia = a.tensors.begin(), ib = b.tensors.begin(); ia != a.tensors.end(); ++ia, ++ib) {
        const cw::st::TensorRecord &x = ia->second, &y = ib->second;
        if (ia->first != ib->first || x.dtype != y.dtype || x.shape != y.shape || x.bytes != y.bytes) return false;
    }
    return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    cw::st::File file;
    try {
        file = cw::st::parse(data, size, "fuzz");
    } catch (const cw::Error&) {
        return 0;
    }
    // From here on every error is a bug: the input was accepted as valid.
    const std::vector<uint8_t> bytes = cw::st::serialize(file);
    if (!same(cw::st::parse(bytes.data(), bytes.size(), "fuzz-reserialized"), file)) std::abort();
    for (const auto& [name, t] : file.tensors) {
        using D = cw::st::DType;
        if (t.dtype == D::F32 || t.dtype == D::F16 || t.dtype == D::BF16 || t.dtype == D::F64)
            if (cw::st::to_f32(t).size() != cw::st::numel(t.shape, name)) std::abort();
    }
    return 0;
}
