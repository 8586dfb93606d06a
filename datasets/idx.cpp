#include "datasets/idx.h"

#include <cstdio>

#include "datasets/byte_reader.h"

namespace cw::data {

IdxArray parse_idx(const uint8_t* data, size_t size, const std::string& source) {
    ByteReader in(data, size, source);
    if (size < 4) fail(source, "not an IDX file (" + std::to_string(size) + " bytes, shorter than the 4-byte magic)");
    const uint8_t zero0 = in.u8("magic"), zero1 = in.u8("magic"), type = in.u8("magic"), rank = in.u8("magic");
    if (zero0 != 0 || zero1 != 0) {
        char magic[32];
        std::snprintf(magic, sizeof magic, "%02x %02x %02x %02x", zero0, zero1, type, rank);
        fail(source, std::string("wrong magic number ") + magic + " (an IDX file starts with 00 00 08 <rank>)" +
                         (zero0 == 0x1f && zero1 == 0x8b ? "; this is gzip data that was not decompressed" : ""));
    }
    if (type != 0x08) {
        char t[8];
        std::snprintf(t, sizeof t, "0x%02x", type);
        fail(source, std::string("IDX element type ") + t + " is not supported (expected 0x08, unsigned byte)");
    }
    if (rank < 1 || rank > 4)
        fail(source, "IDX rank " + std::to_string(rank) + " is out of range (expected 1 to 4)");

    IdxArray out;
    uint64_t count = 1;
    bool saturated = false;  // the product exceeds the file size, so its exact value does not matter
    std::string dims_text;
    for (int i = 0; i < rank; ++i) {
        const uint32_t d = in.u32_be("IDX dimensions");
        out.dims.push_back(d);
        dims_text += (i ? ", " : "") + std::to_string(d);
        if (!saturated) {
            count *= d;
            if (count > size) saturated = true;
        }
    }
    if (saturated || count != in.remaining()) {
        const std::string need = saturated ? "more than " + std::to_string(size) : std::to_string(count);
        fail(source, std::string(saturated || count > in.remaining() ? "truncated" : "has trailing bytes") +
                         ": header dims [" + dims_text + "] need " + need + " data bytes, file holds " +
                         std::to_string(in.remaining()));
    }
    out.values.assign(in.here(), in.here() + count);
    return out;
}

}  // namespace cw::data
