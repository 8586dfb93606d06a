#include "datasets/inflate.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

#include "datasets/error.h"

namespace cw::data {

bool is_gzip(const uint8_t* data, size_t size) { return size >= 2 && data[0] == 0x1f && data[1] == 0x8b; }

namespace {

// Owns a z_stream so every exit path releases zlib's state.
struct Inflater {
    z_stream zs{};
    explicit Inflater(ZFormat format, const std::string& source) {
        const int window_bits = format == ZFormat::Gzip ? 15 + 16 : 15;
        if (inflateInit2(&zs, window_bits) != Z_OK) fail(source, "zlib could not start a decompressor");
    }
    ~Inflater() { inflateEnd(&zs); }
    Inflater(const Inflater&) = delete;
    Inflater& operator=(const Inflater&) = delete;
};

const char* format_name(ZFormat f) { return f == ZFormat::Gzip ? "gzip" : "zlib"; }

// Runs the decompressor into `out` until the stream ends, `limit` bytes are produced, or the input runs out.
// Returns true if the stream reached its end marker; `out` holds exactly the bytes produced.
bool run(Inflater& inf, const uint8_t* data, size_t size, ZFormat format, const std::string& source,
         std::vector<uint8_t>& out, size_t limit) {
    z_stream& zs = inf.zs;
    const size_t max_chunk = std::numeric_limits<uInt>::max() / 2;
    size_t fed = 0, produced = 0;
    out.clear();
    for (;;) {
        if (zs.avail_in == 0 && fed < size) {
            const size_t n = std::min(max_chunk, size - fed);
            zs.next_in = const_cast<Bytef*>(data + fed);
            zs.avail_in = static_cast<uInt>(n);
            fed += n;
        }
        if (produced == limit) return false;
        if (produced == out.size())
            out.resize(std::min(limit, std::max<size_t>(out.capacity(), std::max<size_t>(2 * produced, 1 << 16))));
        const size_t room = std::min(max_chunk, out.size() - produced);
        zs.next_out = out.data() + produced;
        zs.avail_out = static_cast<uInt>(room);
        const int rc = inflate(&zs, Z_NO_FLUSH);
        produced += room - zs.avail_out;
        if (rc == Z_STREAM_END) {
            out.resize(produced);
            return true;
        }
        if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_MEM_ERROR || rc == Z_STREAM_ERROR)
            fail(source, std::string("corrupt ") + format_name(format) + " data (" + (zs.msg ? zs.msg : "zlib error") +
                             ")");
        if (rc == Z_BUF_ERROR && zs.avail_in == 0 && fed == size) {
            out.resize(produced);
            return false;  // the input ended before the stream's end marker
        }
    }
}

}  // namespace

std::vector<uint8_t> inflate_all(const uint8_t* data, size_t size, ZFormat format, const std::string& source,
                                 size_t max_output, size_t size_hint) {
    Inflater inf(format, source);
    std::vector<uint8_t> out;
    out.reserve(std::min(size_hint, max_output));  // run() grows from the reserved capacity first
    // One byte over the cap tells "exactly at the cap" apart from "more than the cap".
    const size_t limit = max_output == std::numeric_limits<size_t>::max() ? max_output : max_output + 1;
    const bool ended = run(inf, data, size, format, source, out, limit);
    if (out.size() > max_output)
        fail(source, std::string(format_name(format)) + " stream inflates to more than the expected " +
                         std::to_string(max_output) + " bytes");
    if (!ended) fail(source, std::string("truncated ") + format_name(format) + " stream (ends before its end marker)");
    return out;
}

std::vector<uint8_t> inflate_prefix(const uint8_t* data, size_t size, ZFormat format, const std::string& source,
                                    size_t n) {
    Inflater inf(format, source);
    std::vector<uint8_t> out;
    run(inf, data, size, format, source, out, n);
    return out;
}

}  // namespace cw::data
