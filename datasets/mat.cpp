#include "datasets/mat.h"

#include <cmath>
#include <cstring>

#include "datasets/byte_reader.h"
#include "datasets/inflate.h"

namespace cw::data {

int mat_type_size(int t) {
    switch (t) {
        case miINT8: case miUINT8: return 1;
        case miINT16: case miUINT16: return 2;
        case miINT32: case miUINT32: case miSINGLE: return 4;
        case miDOUBLE: case miINT64: case miUINT64: return 8;
        default: return 0;
    }
}

int64_t MatVariable::numel() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;  // bounded by the parser
    return n;
}

const MatVariable* MatFile::find(const std::string& name) const {
    for (const auto& v : variables)
        if (v.name == name) return &v;
    return nullptr;
}

namespace {

size_t pad8(size_t n) { return (n + 7) & ~size_t(7); }

struct Tag {
    uint32_t type = 0;
    uint32_t nbytes = 0;
    size_t data_pos = 0;  // absolute position of the element's data in the reader
    size_t next_pos = 0;  // where the following element starts (with padding)
};

// Reads one element tag at the reader's position, in either the normal 8-byte form or the "small data element"
// form (type and size packed in 4 bytes, up to 4 data bytes in the next 4). Leaves the reader after the tag.
Tag read_tag(ByteReader& in, bool pad_data) {
    Tag t;
    in.need(4, "an element tag");
    const uint32_t word = in.u32_le("an element tag");
    if (word >> 16) {
        t.type = word & 0xffff;
        t.nbytes = word >> 16;
        if (t.nbytes > 4)
            fail(in.source(), "malformed small data element at byte " + std::to_string(in.pos() - 4) + " (" +
                                  std::to_string(t.nbytes) + " bytes, at most 4 allowed)");
        in.need(4, "a small data element");
        t.data_pos = in.pos();
        t.next_pos = in.pos() + 4;
        return t;
    }
    t.type = word;
    t.nbytes = in.u32_le("an element tag");
    t.data_pos = in.pos();
    if (t.nbytes > in.remaining())
        fail(in.source(), "truncated: element at byte " + std::to_string(t.data_pos - 8) + " claims " +
                              std::to_string(t.nbytes) + " bytes, " + std::to_string(in.remaining()) + " left");
    const size_t span = pad_data ? pad8(t.nbytes) : t.nbytes;
    t.next_pos = std::min(in.size(), t.data_pos + span);  // the final element may lack its padding
    return t;
}

bool numeric_class(int c) { return c >= mxDOUBLE_CLASS && c <= mxUINT64_CLASS; }

// Parses the body of a miMATRIX element that spans [begin, end) of `in`. Returns false for arrays we do not
// read (non-numeric classes). `storage` (may be null) is the buffer `in` reads from, shared instead of copied.
bool parse_matrix(ByteReader& in, size_t end, const std::shared_ptr<const std::vector<uint8_t>>& storage,
                  MatVariable& var) {
    const std::string& src = in.source();
    ByteReader body(in.base(), end, src);
    body.seek(in.pos());

    Tag flags = read_tag(body, true);
    if (flags.type != miUINT32 || flags.nbytes != 8)
        fail(src, "malformed matrix at byte " + std::to_string(flags.data_pos - 8) +
                      ": expected an 8-byte miUINT32 array-flags element");
    var.mx_class = body.base()[flags.data_pos];  // class is the low byte of the first flags word
    if (!numeric_class(var.mx_class)) return false;
    body.seek(flags.next_pos);

    Tag dims = read_tag(body, true);
    if (dims.type != miINT32 || dims.nbytes % 4 != 0 || dims.nbytes < 4)
        fail(src, "malformed matrix at byte " + std::to_string(dims.data_pos) +
                      ": expected a miINT32 dimensions element");
    uint64_t numel = 1;
    const uint64_t cap = (uint64_t(1) << 62) / 8;
    for (uint32_t k = 0; k < dims.nbytes / 4; ++k) {
        int32_t d;
        std::memcpy(&d, body.base() + dims.data_pos + 4 * k, 4);
        if (d < 0) fail(src, "matrix has a negative dimension (" + std::to_string(d) + ")");
        if (d != 0 && numel > cap / uint64_t(d)) fail(src, "matrix dimensions are impossibly large");
        numel *= uint64_t(d);
        var.dims.push_back(d);
    }
    body.seek(dims.next_pos);

    Tag name = read_tag(body, true);
    if (name.type != miINT8 && name.type != miUTF8)
        fail(src, "malformed matrix at byte " + std::to_string(name.data_pos) + ": expected an array-name element");
    var.name.assign(reinterpret_cast<const char*>(body.base() + name.data_pos), name.nbytes);
    body.seek(name.next_pos);

    Tag real = read_tag(body, true);
    const int esize = mat_type_size(static_cast<int>(real.type));
    if (esize == 0)
        fail(src, "variable '" + var.name + "': real part has unsupported data type " + std::to_string(real.type));
    if (uint64_t(real.nbytes) != numel * uint64_t(esize))
        fail(src, "variable '" + var.name + "': real part has " + std::to_string(real.nbytes) +
                      " bytes, its dimensions need " + std::to_string(numel * esize));
    var.data_type = static_cast<int>(real.type);
    var.bytes = real.nbytes;
    if (storage) {
        var.storage = storage;
        var.offset = real.data_pos;
    } else {
        var.storage = std::make_shared<const std::vector<uint8_t>>(body.base() + real.data_pos,
                                                                   body.base() + real.data_pos + real.nbytes);
        var.offset = 0;
    }
    return true;
}

}  // namespace

MatFile parse_mat(const uint8_t* data, size_t size, const std::string& source, size_t max_inflated_bytes) {
    if (size < 128) fail(source, "not a MAT v5 file (" + std::to_string(size) + " bytes, the header alone is 128)");
    const char e0 = static_cast<char>(data[126]), e1 = static_cast<char>(data[127]);
    const uint16_t version = static_cast<uint16_t>(data[124] | (data[125] << 8));
    if (e0 == 'M' && e1 == 'I') fail(source, "big-endian MAT files are not supported");
    if (e0 != 'I' || e1 != 'M')
        fail(source, "not a MAT v5 file (wrong endian indicator; MAT v4 and other formats are not supported)");
    if (version == 0x0200)
        fail(source, "MAT v7.3 (HDF5) files are not supported; re-save with MATLAB's -v7 option");
    if (version != 0x0100)
        fail(source, "unsupported MAT version " + std::to_string(version >> 8) + "." + std::to_string(version & 0xff) +
                         " (expected 1.0, Level 5)");

    MatFile file;
    ByteReader in(data, size, source);
    in.seek(128);
    while (in.remaining() > 0) {
        const size_t at = in.pos();
        // Top-level elements are not padded (a compressed element's length is its exact zlib length).
        const Tag tag = read_tag(in, false);
        if (tag.type == miCOMPRESSED) {
            const uint8_t* z = data + tag.data_pos;
            const std::string where = source + " (compressed element at byte " + std::to_string(at) + ")";
            const std::vector<uint8_t> head = inflate_prefix(z, tag.nbytes, ZFormat::Zlib, where, 8);
            if (head.size() < 8) fail(where, "inflates to fewer than the 8 bytes of an element tag");
            uint32_t inner_type, inner_bytes;
            std::memcpy(&inner_type, head.data(), 4);
            std::memcpy(&inner_bytes, head.data() + 4, 4);
            if (inner_type == miMATRIX && inner_bytes > 0) {
                const uint64_t total = 8 + uint64_t(inner_bytes);
                if (total > max_inflated_size(tag.nbytes) || total > max_inflated_bytes)
                    fail(where, "claims " + std::to_string(total) + " bytes, more than " +
                                    std::to_string(tag.nbytes) + " compressed bytes can hold");
                auto buf = std::make_shared<const std::vector<uint8_t>>(
                    inflate_all(z, tag.nbytes, ZFormat::Zlib, where, total, total));
                if (buf->size() != total)
                    fail(where, "truncated: inflates to " + std::to_string(buf->size()) + " bytes, its tag promises " +
                                    std::to_string(total));
                ByteReader inner(buf->data(), buf->size(), where);
                inner.seek(8);
                MatVariable v;
                if (parse_matrix(inner, buf->size(), buf, v)) file.variables.push_back(std::move(v));
            }
        } else if (tag.type == miMATRIX && tag.nbytes > 0) {
            ByteReader sub(data, tag.data_pos + tag.nbytes, source);
            sub.seek(tag.data_pos);
            MatVariable v;
            if (parse_matrix(sub, tag.data_pos + tag.nbytes, nullptr, v)) file.variables.push_back(std::move(v));
        }
        in.seek(tag.next_pos);
    }
    return file;
}

namespace {
template <class T>
T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));  // MAT files accepted here are little-endian, like the hosts we run on
    return v;
}
}  // namespace

std::vector<int64_t> mat_to_int64(const MatVariable& v, const std::string& source) {
    const int64_t n = v.numel();
    std::vector<int64_t> out(n);
    const uint8_t* p = v.data();
    const int s = mat_type_size(v.data_type);
    for (int64_t i = 0; i < n; ++i, p += s) {
        switch (v.data_type) {
            case miINT8: out[i] = load<int8_t>(p); break;
            case miUINT8: out[i] = *p; break;
            case miINT16: out[i] = load<int16_t>(p); break;
            case miUINT16: out[i] = load<uint16_t>(p); break;
            case miINT32: out[i] = load<int32_t>(p); break;
            case miUINT32: out[i] = load<uint32_t>(p); break;
            case miINT64: out[i] = load<int64_t>(p); break;
            case miUINT64: {
                const uint64_t u = load<uint64_t>(p);
                if (u > uint64_t(INT64_MAX))
                    fail(source, "variable '" + v.name + "': element " + std::to_string(i) + " does not fit in int64");
                out[i] = static_cast<int64_t>(u);
                break;
            }
            default: {
                const double f = v.data_type == miSINGLE ? double(load<float>(p)) : load<double>(p);
                if (!(std::fabs(f) < 9.0e15) || f != std::floor(f))
                    fail(source, "variable '" + v.name + "': element " + std::to_string(i) + " (" +
                                     std::to_string(f) + ") is not a whole number");
                out[i] = static_cast<int64_t>(f);
            }
        }
    }
    return out;
}

std::vector<uint8_t> mat_to_uint8(const MatVariable& v, const std::string& source) {
    if (v.data_type == miUINT8) return std::vector<uint8_t>(v.data(), v.data() + v.bytes);
    const std::vector<int64_t> wide = mat_to_int64(v, source);
    std::vector<uint8_t> out(wide.size());
    for (size_t i = 0; i < wide.size(); ++i) {
        if (wide[i] < 0 || wide[i] > 255)
            fail(source, "variable '" + v.name + "': element " + std::to_string(i) + " (" + std::to_string(wide[i]) +
                             ") is outside [0, 255]");
        out[i] = static_cast<uint8_t>(wide[i]);
    }
    return out;
}

}  // namespace cw::data
