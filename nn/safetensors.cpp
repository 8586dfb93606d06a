// The safetensors file format (nn/safetensors.h): the header checked byte by byte, reading and atomic writing;
// a record's values (to and from floats and integers) are nn/safetensors_values.cpp.
#include "nn/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "util/atomic_file.h"

namespace cw::st {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
    throw FormatError(where + ": " + what);
}

// Names come from untrusted headers: keep messages on one line and of bounded length.
std::string printable(const std::string& s, size_t max_bytes = 120) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (out.size() >= max_bytes) {
            if ((c & 0xC0) == 0x80) {  // cut inside a UTF-8 sequence: drop its first bytes too
                while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
                if (!out.empty()) out.pop_back();
            }
            return out + "...";
        }
        if (c < 0x20 || c == 0x7F) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\x%02x", c);
            out += esc;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::string quote(const std::string& name) { return "'" + printable(name) + "'"; }

// Shared by read_file (before reading the whole file) and parse.
void check_header_length(uint64_t n, uint64_t file_size, const std::string& src) {
    if (n > file_size - 8)
        fail(src, "header length " + std::to_string(n) + " exceeds file size " + std::to_string(file_size) +
                      " (truncated or not a safetensors file)");
    if (n > kMaxHeaderBytes)
        fail(src, "header length " + std::to_string(n) + " exceeds the limit of " +
                      std::to_string(kMaxHeaderBytes) + " bytes");
}

// nlohmann's DOM parser keeps one of two duplicate keys silently. This first pass over the header rejects
// duplicates, and nesting deeper than a safetensors header has (root object > tensor entry > shape array),
// so that hostile nesting never reaches the DOM builder.
class HeaderChecker : public nlohmann::json_sax<json> {
public:
    std::string error;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return open(); }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(); }
    bool end_array() override { return close(); }

    bool key(string_t& k) override {
        if (!keys_.back().insert(k).second) {
            error = "duplicate key " + quote(k) + " in header JSON";
            return false;
        }
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
        // Drop the "[json.exception.parse_error.101] " prefix; the rest gives line, column and what was expected.
        std::string what = ex.what();
        const size_t cut = what.find("] ");
        if (cut != std::string::npos) what = what.substr(cut + 2);
        error = "header is not valid JSON: " + printable(what, 200);
        return false;
    }

private:
    static constexpr size_t kMaxDepth = 3;
    std::vector<std::set<std::string>> keys_;  // one set per open object or array

    bool open() {
        if (keys_.size() == kMaxDepth) {
            error = "header JSON is nested deeper than a safetensors header (object > tensor > shape)";
            return false;
        }
        keys_.emplace_back();
        return true;
    }
    bool close() {
        keys_.pop_back();
        return true;
    }
};

json parse_header_json(const uint8_t* hdr, size_t n, const std::string& src) {
    // nlohmann's lexer takes a NUL byte for the end of input and would ignore whatever follows it.
    if (const void* nul = std::memchr(hdr, 0, n))
        fail(src, "header is not valid JSON: NUL byte at header byte " +
                      std::to_string(static_cast<const uint8_t*>(nul) - hdr));
    HeaderChecker checker;
    bool ok = false;
    try {
        ok = json::sax_parse(hdr, hdr + n, &checker, nlohmann::detail::input_format_t::json, /*strict=*/true);
    } catch (const json::exception& e) {
        fail(src, std::string("header is not valid JSON: ") + printable(e.what(), 200));
    }
    if (!ok) fail(src, checker.error.empty() ? "header is not valid JSON" : checker.error);
    json j = json::parse(hdr, hdr + n, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) fail(src, "header is not valid JSON");
    if (!j.is_object()) fail(src, "header JSON is not an object");
    return j;
}

// A JSON value that must be a non-negative integer (shape dimension or data offset).
uint64_t get_count(const json& v, const std::string& ctx, const char* what) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer()) {
        const int64_t i = v.get<int64_t>();
        if (i < 0) fail(ctx, std::string(what) + " has a negative value " + std::to_string(i));
        return static_cast<uint64_t>(i);
    }
    fail(ctx, std::string(what) + " must contain non-negative integers, found " + printable(v.dump(), 60));
}

std::string json_string(const std::string& s, const std::string& dest, const std::string& what) {
    try {
        return json(s).dump();
    } catch (const json::exception&) {
        fail(dest, what + " is not valid UTF-8");
    }
}

// Closes on every path, so error branches cannot leak descriptors.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

std::string os_error(int err) { return std::strerror(err); }

}  // namespace

size_t dtype_size(DType d) {
    switch (d) {
    case DType::BOOL: case DType::U8: case DType::I8: case DType::F8_E5M2: case DType::F8_E4M3: return 1;
    case DType::I16: case DType::U16: case DType::F16: case DType::BF16: return 2;
    case DType::I32: case DType::U32: case DType::F32: return 4;
    case DType::F64: case DType::I64: case DType::U64: return 8;
    }
    throw FormatError("invalid safetensors dtype value " + std::to_string(static_cast<int>(d)));
}

const char* dtype_name(DType d) {
    switch (d) {
    case DType::BOOL: return "BOOL";
    case DType::U8: return "U8";
    case DType::I8: return "I8";
    case DType::F8_E5M2: return "F8_E5M2";
    case DType::F8_E4M3: return "F8_E4M3";
    case DType::I16: return "I16";
    case DType::U16: return "U16";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I32: return "I32";
    case DType::U32: return "U32";
    case DType::F32: return "F32";
    case DType::F64: return "F64";
    case DType::I64: return "I64";
    case DType::U64: return "U64";
    }
    throw FormatError("invalid safetensors dtype value " + std::to_string(static_cast<int>(d)));
}

DType parse_dtype(const std::string& name, const std::string& context) {
    static const DType all[] = {DType::BOOL, DType::U8,  DType::I8,  DType::F8_E5M2, DType::F8_E4M3,
                                DType::I16,  DType::U16, DType::F16, DType::BF16,    DType::I32,
                                DType::U32,  DType::F32, DType::F64, DType::I64,     DType::U64};
    for (DType d : all)
        if (name == dtype_name(d)) return d;
    fail(context, "unknown dtype " + quote(name) +
                      " (expected one of BOOL U8 I8 F8_E5M2 F8_E4M3 I16 U16 F16 BF16 I32 U32 F32 F64 I64 U64)");
}

uint64_t numel(const std::vector<int64_t>& shape, const std::string& context) {
    uint64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) fail(context, "shape has a negative dimension " + std::to_string(d));
        if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
            fail(context, "shape's element count overflows 64 bits");
    }
    return n;
}

uint64_t byte_count(const TensorRecord& t, const std::string& context) {
    uint64_t n = 0;
    if (__builtin_mul_overflow(numel(t.shape, context), dtype_size(t.dtype), &n))
        fail(context, "shape's byte count overflows 64 bits");
    return n;
}

static std::map<std::string, std::string> metadata_of(const json& val, const std::string& src) {
    if (!val.is_object()) fail(src, "__metadata__ is not a JSON object");
    std::map<std::string, std::string> out;
    for (const auto& [mk, mv] : val.items()) {
        if (!mv.is_string()) fail(src, "__metadata__ value for " + quote(mk) + " is not a string");
        out[mk] = mv.get<std::string>();
    }
    return out;
}

namespace {

// Where one tensor's bytes lie in the data buffer; `name` points into the File's map.
struct Span {
    uint64_t begin, end;
    const std::string* name;
};

// One header entry, {"dtype", "shape", "data_offsets"}, checked against itself and the buffer's size; `begin` and
// `end` get its byte range.
TensorRecord tensor_entry(const std::string& key, const json& val, uint64_t buffer_size, const std::string& src,
                          uint64_t& begin, uint64_t& end) {
    const std::string ctx = src + ": tensor " + quote(key);
    if (!val.is_object()) fail(ctx, "entry is not a JSON object");
    if (val.size() != 3 || !val.contains("dtype") || !val.contains("shape") || !val.contains("data_offsets"))
        fail(ctx, "entry must have exactly the keys dtype, shape, data_offsets");

    TensorRecord rec;
    const json& dt = val["dtype"];
    if (!dt.is_string()) fail(ctx, "dtype is not a string");
    rec.dtype = parse_dtype(dt.get<std::string>(), ctx);

    const json& shape = val["shape"];
    if (!shape.is_array()) fail(ctx, "shape is not an array");
    for (const json& d : shape) {
        const uint64_t dim = get_count(d, ctx, "shape");
        if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            fail(ctx, "shape dimension " + std::to_string(dim) + " is too large");
        rec.shape.push_back(static_cast<int64_t>(dim));
    }
    const uint64_t nbytes = byte_count(rec, ctx);

    const json& off = val["data_offsets"];
    if (!off.is_array() || off.size() != 2) fail(ctx, "data_offsets is not an array of two integers");
    begin = get_count(off[0], ctx, "data_offsets");
    end = get_count(off[1], ctx, "data_offsets");
    const std::string range = "[" + std::to_string(begin) + "," + std::to_string(end) + "]";
    if (begin > end) fail(ctx, "data_offsets " + range + " begin after end");
    if (end > buffer_size)
        fail(ctx, "data_offsets " + range + " lie outside the " + std::to_string(buffer_size) +
                      "-byte data buffer (truncated file?)");
    if (end - begin != nbytes)
        fail(ctx, "data_offsets " + range + " span " + std::to_string(end - begin) + " bytes but " +
                      dtype_name(rec.dtype) + " shape " + printable(shape.dump(), 60) + " needs " +
                      std::to_string(nbytes));
    return rec;
}

// The tensors must tile the data buffer exactly: no overlap, no gap, nothing after the last. Checked before copying
// any data: overlapping entries could otherwise make us copy the same bytes many times over. Zero-byte tensors sort
// before a tensor starting at the same offset and tile trivially. Sorts `spans`.
void check_tiling(std::vector<Span>& spans, uint64_t buffer_size, const std::string& src) {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    uint64_t pos = 0;
    const std::string* prev = nullptr;
    for (const Span& s : spans) {
        const std::string range = "[" + std::to_string(s.begin) + "," + std::to_string(s.end) + "]";
        if (s.begin < pos)
            fail(src, "tensor " + quote(*s.name) + " data_offsets " + range + " overlap tensor " + quote(*prev));
        if (s.begin > pos)
            fail(src, "gap of " + std::to_string(s.begin - pos) + " unused bytes in the data buffer before tensor " +
                          quote(*s.name) + " (data_offsets " + range + ")");
        pos = s.end;
        prev = s.name;
    }
    if (pos != buffer_size)
        fail(src, "data buffer is " + std::to_string(buffer_size) + " bytes but tensors cover only " +
                      std::to_string(pos) + " (trailing bytes after the last tensor)");
}

}  // namespace

File parse(const uint8_t* data, size_t size, const std::string& src) {
    if (size < 8)
        fail(src, "file is " + std::to_string(size) +
                      " bytes, shorter than the 8-byte header length (truncated or not a safetensors file)");
    const uint64_t n = load_le(data, 8);
    check_header_length(n, size, src);
    const uint8_t* hdr = data + 8;
    if (n == 0 || hdr[0] != '{') fail(src, "header does not start with '{' (not a safetensors file)");
    const json header = parse_header_json(hdr, n, src);

    const uint8_t* buffer = hdr + n;
    const uint64_t buffer_size = size - 8 - n;
    std::vector<Span> spans;
    File file;
    for (const auto& [key, val] : header.items()) {
        if (key == "__metadata__") {
            file.metadata = metadata_of(val, src);
            continue;
        }
        uint64_t begin = 0, end = 0;
        TensorRecord rec = tensor_entry(key, val, buffer_size, src, begin, end);
        auto it = file.tensors.emplace(key, std::move(rec)).first;
        spans.push_back({begin, end, &it->first});
    }
    check_tiling(spans, buffer_size, src);
    for (const Span& s : spans) file.tensors[*s.name].bytes.assign(buffer + s.begin, buffer + s.end);
    return file;
}

namespace {

// A regular file opened for reading, with its size; read_exact fails with the path on short reads.
struct InputFile {
    std::string path;
    Fd f;
    uint64_t size = 0;

    explicit InputFile(const std::string& p) : path(p) {
        f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (f.fd < 0) throw IoError(path + ": cannot open for reading: " + os_error(errno));
        struct stat st;
        if (::fstat(f.fd, &st) != 0) throw IoError(path + ": cannot stat: " + os_error(errno));
        if (!S_ISREG(st.st_mode)) throw IoError(path + ": not a regular file");
        size = static_cast<uint64_t>(st.st_size);
        if (size > std::numeric_limits<size_t>::max()) throw IoError(path + ": file too large for this machine");
    }

    void read_exact(uint8_t* dst, size_t count, uint64_t offset) const {
        size_t done = 0;
        while (done < count) {
            const ssize_t r = ::pread(f.fd, dst + done, count - done, static_cast<off_t>(offset + done));
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) throw IoError(path + ": read failed: " + os_error(errno));
            if (r == 0) throw IoError(path + ": file shrank while being read");
            done += static_cast<size_t>(r);
        }
    }

    // The checked header length; rejects a bad one before anything else is read.
    uint64_t header_length() const {
        uint8_t prefix[8];
        read_exact(prefix, 8, 0);
        const uint64_t n = load_le(prefix, 8);
        check_header_length(n, size, path);
        return n;
    }
};

}  // namespace

File read_file(const std::string& path) {
    const InputFile in(path);
    if (in.size >= 8) in.header_length();  // possibly gigabytes of data follow: fail on a bad length first
    std::vector<uint8_t> bytes(static_cast<size_t>(in.size));
    in.read_exact(bytes.data(), bytes.size(), 0);
    return parse(bytes.data(), bytes.size(), path);
}

std::map<std::string, std::string> read_metadata(const std::string& path) {
    const InputFile in(path);
    if (in.size < 8)
        fail(path, "file is " + std::to_string(in.size) +
                       " bytes, shorter than the 8-byte header length (truncated or not a safetensors file)");
    const uint64_t n = in.header_length();
    std::vector<uint8_t> hdr(static_cast<size_t>(n));
    in.read_exact(hdr.data(), hdr.size(), 8);
    if (n == 0 || hdr[0] != '{') fail(path, "header does not start with '{' (not a safetensors file)");
    const json header = parse_header_json(hdr.data(), hdr.size(), path);
    const auto it = header.find("__metadata__");
    return it == header.end() ? std::map<std::string, std::string>{} : metadata_of(*it, path);
}

std::vector<uint8_t> serialize(const File& file, const std::string& dest) {
    std::string h = "{";
    if (!file.metadata.empty()) {
        h += "\"__metadata__\":{";
        bool first = true;
        for (const auto& [k, v] : file.metadata) {
            if (!first) h += ',';
            first = false;
            h += json_string(k, dest, "metadata key " + quote(k));
            h += ':';
            h += json_string(v, dest, "metadata value for " + quote(k));
        }
        h += '}';
    }
    uint64_t offset = 0;
    for (const auto& [name, rec] : file.tensors) {
        const std::string ctx = dest + ": tensor " + quote(name);
        if (name == "__metadata__") fail(ctx, "name is reserved for metadata");
        const uint64_t nbytes = byte_count(rec, ctx);
        if (rec.bytes.size() != nbytes)
            fail(ctx, "has " + std::to_string(rec.bytes.size()) + " bytes but its " + dtype_name(rec.dtype) +
                          " shape needs " + std::to_string(nbytes));
        if (h.size() > 1) h += ',';
        h += json_string(name, dest, "tensor name " + quote(name));
        h += ":{\"dtype\":\"";
        h += dtype_name(rec.dtype);
        h += "\",\"shape\":[";
        for (size_t i = 0; i < rec.shape.size(); ++i) {
            if (i) h += ',';
            h += std::to_string(rec.shape[i]);
        }
        h += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + nbytes) + "]}";
        offset += nbytes;
    }
    h += '}';
    h.resize((h.size() + 7) / 8 * 8, ' ');  // 8 + N a multiple of 8 keeps the data aligned
    if (h.size() > kMaxHeaderBytes)
        fail(dest, "header would be " + std::to_string(h.size()) + " bytes, over the limit of " +
                       std::to_string(kMaxHeaderBytes));

    std::vector<uint8_t> out(8 + h.size());
    store_le(out.data(), h.size(), 8);
    std::memcpy(out.data() + 8, h.data(), h.size());
    out.reserve(out.size() + offset);
    for (const auto& [name, rec] : file.tensors) out.insert(out.end(), rec.bytes.begin(), rec.bytes.end());
    return out;
}

void write_file(const std::string& path, const File& file) {
    const std::vector<uint8_t> bytes = serialize(file, path);
    try {
        util::write_bytes_atomic(path, bytes.data(), bytes.size());
    } catch (const std::runtime_error& e) {
        throw IoError(e.what());
    }
}

std::string strip_prefixes(const std::string& name) {
    size_t pos = 0;
    for (;;) {
        if (name.compare(pos, 7, "module.") == 0) pos += 7;
        else if (name.compare(pos, 6, "model.") == 0) pos += 6;
        else return name.substr(pos);
    }
}

uint64_t load_le(const uint8_t* p, int nbytes) {
    uint64_t v = 0;
    for (int i = nbytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

void store_le(uint8_t* p, uint64_t v, int nbytes) {
    for (int i = 0; i < nbytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace cw::st
