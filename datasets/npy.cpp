#include "datasets/npy.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

#include "datasets/byte_reader.h"

namespace cw::data {

int64_t NpyHeader::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;  // parse_npy_header guarantees this does not overflow
    return n;
}

namespace {

// A tiny reader for the one Python literal NumPy writes: a dict of strings, booleans and int tuples.
class DictParser {
public:
    DictParser(const std::string& text, const std::string& source) : s_(text), source_(source) {}

    void skip_space() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    bool peek(char c) {
        skip_space();
        return i_ < s_.size() && s_[i_] == c;
    }
    void expect(char c) {
        if (!peek(c)) bad(std::string("expected '") + c + "'");
        ++i_;
    }
    bool accept(char c) {
        if (!peek(c)) return false;
        ++i_;
        return true;
    }
    std::string string_literal() {
        skip_space();
        if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) bad("expected a quoted string");
        const char q = s_[i_++];
        const size_t end = s_.find(q, i_);
        if (end == std::string::npos) bad("unterminated string");
        std::string v = s_.substr(i_, end - i_);
        i_ = end + 1;
        return v;
    }
    bool boolean() {
        skip_space();
        if (s_.compare(i_, 4, "True") == 0) return i_ += 4, true;
        if (s_.compare(i_, 5, "False") == 0) return i_ += 5, false;
        bad("expected True or False");
    }
    std::vector<int64_t> int_tuple() {
        std::vector<int64_t> dims;
        expect('(');
        while (!accept(')')) {
            skip_space();
            if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) bad("expected a dimension");
            int64_t v = 0;
            while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
                if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) bad("dimension too large");
                v = v * 10 + (s_[i_++] - '0');
            }
            if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 long suffix
            dims.push_back(v);
            if (!accept(',')) {
                expect(')');
                break;
            }
        }
        return dims;
    }
    bool at_end() {
        skip_space();
        return i_ == s_.size();
    }
    [[noreturn]] void bad(const std::string& what) const {
        fail(source_, "bad .npy header: " + what + " at character " + std::to_string(i_) + " of \"" + s_ + "\"");
    }

private:
    const std::string& s_;
    const std::string& source_;
    size_t i_ = 0;
};

void parse_descr(NpyHeader& h, const std::string& source) {
    const std::string& d = h.descr;
    if (d.size() < 3) fail(source, "bad .npy header: dtype '" + d + "' not understood");
    const char order = d[0], kind = d[1];
    int size = 0;
    for (size_t i = 2; i < d.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(d[i])) || size > 1000)
            fail(source, "bad .npy header: dtype '" + d + "' not understood");
        size = size * 10 + (d[i] - '0');
    }
    const bool int_ok = (kind == 'u' || kind == 'i') && (size == 1 || size == 2 || size == 4 || size == 8);
    const bool float_ok = kind == 'f' && (size == 4 || size == 8);
    const bool bool_ok = kind == 'b' && size == 1;
    if (!(int_ok || float_ok || bool_ok))
        fail(source, ".npy dtype '" + d + "' is not supported (expected an integer, bool or float32/64 dtype)");
    if (order != '<' && order != '|' && order != '=' && order != '>')
        fail(source, "bad .npy header: dtype '" + d + "' has no byte-order mark");
    if (order == '>' && size > 1) fail(source, ".npy dtype '" + d + "' is big-endian; only little-endian is supported");
    h.kind = kind;
    h.item_size = size;
}

}  // namespace

NpyHeader parse_npy_header(const uint8_t* data, size_t size, const std::string& source) {
    static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (size < 6 || std::memcmp(data, magic, 6) != 0) fail(source, "not a .npy file (wrong magic number)");
    ByteReader in(data, size, source);
    in.skip(6, "magic");
    const uint8_t major = in.u8("version"), minor = in.u8("version");
    if (major < 1 || major > 3)
        fail(source, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                         " is not supported (expected 1.x, 2.x or 3.x)");
    const uint32_t header_len = major == 1 ? in.u16_le("header length") : in.u32_le("header length");
    in.need(header_len, "the .npy header dict");
    NpyHeader h;
    h.data_offset = in.pos() + header_len;
    const std::string text(reinterpret_cast<const char*>(in.here()), header_len);

    DictParser p(text, source);
    bool have_descr = false, have_order = false, have_shape = false;
    p.expect('{');
    while (!p.accept('}')) {
        const std::string key = p.string_literal();
        p.expect(':');
        if (key == "descr") {
            if (p.peek('[')) fail(source, ".npy structured dtypes are not supported");
            h.descr = p.string_literal();
            have_descr = true;
        } else if (key == "fortran_order") {
            h.fortran_order = p.boolean();
            have_order = true;
        } else if (key == "shape") {
            h.shape = p.int_tuple();
            have_shape = true;
        } else {
            p.bad("unexpected key '" + key + "'");
        }
        if (!p.accept(',')) {
            p.expect('}');
            break;
        }
    }
    if (!p.at_end()) p.bad("text after the dict");
    if (!have_descr || !have_order || !have_shape)
        fail(source, "bad .npy header: missing 'descr', 'fortran_order' or 'shape' in \"" + text + "\"");
    parse_descr(h, source);
    // Guard the element count so later byte arithmetic cannot overflow.
    uint64_t n = 1;
    const uint64_t cap = (uint64_t(1) << 62) / 8;
    for (int64_t d : h.shape) {
        if (d != 0 && n > cap / uint64_t(d)) fail(source, "bad .npy header: shape is impossibly large");
        n *= uint64_t(d);
    }
    return h;
}

uint64_t npy_expected_file_size(const NpyHeader& h) { return h.data_offset + h.data_bytes(); }

NpyArray parse_npy(const uint8_t* data, size_t size, const std::string& source) {
    NpyArray a;
    a.header = parse_npy_header(data, size, source);
    const uint64_t want = npy_expected_file_size(a.header);
    if (want != size)
        fail(source, std::string(want > size ? "truncated" : "has trailing bytes") + ": header promises " +
                         std::to_string(want) + " bytes in all, file has " + std::to_string(size));
    a.data.assign(data + a.header.data_offset, data + size);
    return a;
}

namespace {
template <class T>
T load_le(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));  // the host is little-endian (x86-64, aarch64), like the accepted files
    return v;
}
}  // namespace

std::vector<int64_t> npy_to_int64(const NpyHeader& h, const uint8_t* p, int64_t count, const std::string& source) {
    std::vector<int64_t> out(count);
    const int s = h.item_size;
    for (int64_t i = 0; i < count; ++i, p += s) {
        int64_t v = 0;
        if (h.kind == 'u' || h.kind == 'b') {
            uint64_t u = s == 1 ? *p : s == 2 ? load_le<uint16_t>(p) : s == 4 ? load_le<uint32_t>(p) : load_le<uint64_t>(p);
            if (u > uint64_t(std::numeric_limits<int64_t>::max()))
                fail(source, "element " + std::to_string(i) + " does not fit in int64");
            v = static_cast<int64_t>(u);
        } else if (h.kind == 'i') {
            v = s == 1 ? load_le<int8_t>(p) : s == 2 ? load_le<int16_t>(p) : s == 4 ? load_le<int32_t>(p) : load_le<int64_t>(p);
        } else {
            const double f = s == 4 ? double(load_le<float>(p)) : load_le<double>(p);
            if (!(std::fabs(f) < 9.0e15) || f != std::floor(f))
                fail(source, "element " + std::to_string(i) + " (" + std::to_string(f) + ") is not a whole number");
            v = static_cast<int64_t>(f);
        }
        out[i] = v;
    }
    return out;
}

}  // namespace cw::data
