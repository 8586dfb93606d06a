#pragma once
// Writers for small dataset files in their real on-disk formats (IDX, CIFAR binary, .npy, MAT v5, PPM, JPEG),
// used by the datasets tests to build fixtures in a temporary folder.
#include <zlib.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "datasets/error.h"

namespace cw_fixtures {

using Bytes = std::vector<uint8_t>;

// A fresh folder under the system temp dir, removed with everything in it when the object goes.
class TempDir {
public:
    TempDir() {
        static std::atomic<int> counter{0};
        path_ = (std::filesystem::temp_directory_path() /
                 ("cw_datasets_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
                    .string();
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

private:
    std::string path_;
};

inline void write_file(const std::string& path, const Bytes& bytes) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("fixture: cannot write " + path);
}

inline void write_text(const std::string& path, const std::string& text) {
    write_file(path, Bytes(text.begin(), text.end()));
}

// zlib (gzip = false) or gzip (gzip = true) compression of `in`.
inline Bytes deflate_bytes(const Bytes& in, bool gzip) {
    z_stream zs{};
    if (deflateInit2(&zs, 6, Z_DEFLATED, gzip ? 15 + 16 : 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("fixture: deflateInit2");
    Bytes out(deflateBound(&zs, in.size()) + 32);
    zs.next_in = const_cast<Bytef*>(in.data());
    zs.avail_in = static_cast<uInt>(in.size());
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("fixture: deflate");
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

inline void put_u32_be(Bytes& b, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}
inline void put_u32_le(Bytes& b, uint32_t v) {
    for (int s = 0; s < 32; s += 8) b.push_back(static_cast<uint8_t>(v >> s));
}
inline void put_u16_le(Bytes& b, uint16_t v) {
    b.push_back(static_cast<uint8_t>(v));
    b.push_back(static_cast<uint8_t>(v >> 8));
}
inline void pad_to_8(Bytes& b) {
    while (b.size() % 8) b.push_back(0);
}

// ---- IDX -------------------------------------------------------------------------------------------------------
inline Bytes make_idx(const std::vector<uint32_t>& dims, const Bytes& values, uint8_t type = 0x08) {
    Bytes b{0, 0, type, static_cast<uint8_t>(dims.size())};
    for (uint32_t d : dims) put_u32_be(b, d);
    b.insert(b.end(), values.begin(), values.end());
    return b;
}

// A deterministic pixel pattern, distinct per image, channel and position.
inline uint8_t pattern(int64_t image, int c, int y, int x) {
    return static_cast<uint8_t>((image * 37 + c * 71 + y * 5 + x * 3) & 0xff);
}

// ---- CIFAR binary ---------------------------------------------------------------------------------------------
// One record per entry of labels[0]; label bytes come from labels[k][i], images from pattern(first_image + i).
inline Bytes make_cifar_records(const std::vector<std::vector<int>>& labels, int64_t first_image = 0) {
    Bytes b;
    for (size_t i = 0; i < labels[0].size(); ++i) {
        for (const auto& l : labels) b.push_back(static_cast<uint8_t>(l[i]));
        for (int c = 0; c < 3; ++c)
            for (int y = 0; y < 32; ++y)
                for (int x = 0; x < 32; ++x) b.push_back(pattern(first_image + int64_t(i), c, y, x));
    }
    return b;
}

// ---- NPY -------------------------------------------------------------------------------------------------------
inline Bytes make_npy(const std::string& descr, const std::vector<int64_t>& shape, const Bytes& payload,
                      int major = 1, bool fortran = false) {
    std::string shape_text = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        shape_text += std::to_string(shape[i]);
        if (shape.size() == 1) shape_text += ",";
        else if (i + 1 < shape.size()) shape_text += ", ";
    }
    shape_text += ")";
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape_text + ", }";
    const size_t prefix = major == 1 ? 10 : 12;
    size_t total = prefix + dict.size() + 1;
    while (total % 64) ++total, dict += ' ';
    dict += '\n';
    Bytes b{0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
    if (major == 1) put_u16_le(b, static_cast<uint16_t>(dict.size()));
    else put_u32_le(b, static_cast<uint32_t>(dict.size()));
    b.insert(b.end(), dict.begin(), dict.end());
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

// ---- MAT v5 ----------------------------------------------------------------------------------------------------
struct MatVar {
    std::string name;
    int mx_class;                 // 6 double, 9 uint8, ...
    std::vector<int32_t> dims;
    int data_type;                // mi type of the stored values
    Bytes data;                   // little-endian values
};

inline Bytes mat_header() {
    std::string text = "MATLAB 5.0 MAT-file, Platform: classwise-tests, Created on: today";
    text.resize(116, ' ');
    Bytes b(text.begin(), text.end());
    b.resize(124, 0);  // subsystem data offset
    put_u16_le(b, 0x0100);
    b.push_back('I');
    b.push_back('M');
    return b;
}

inline void mat_sub_element(Bytes& b, uint32_t type, const Bytes& data, bool allow_small = true) {
    if (allow_small && data.size() <= 4 && !data.empty()) {  // "small data element" form, as MATLAB writes names
        put_u32_le(b, (uint32_t(data.size()) << 16) | type);
        Bytes d = data;
        d.resize(4, 0);
        b.insert(b.end(), d.begin(), d.end());
        return;
    }
    put_u32_le(b, type);
    put_u32_le(b, static_cast<uint32_t>(data.size()));
    b.insert(b.end(), data.begin(), data.end());
    pad_to_8(b);
}

inline Bytes mat_matrix_element(const MatVar& v) {
    Bytes body;
    Bytes flags;
    put_u32_le(flags, static_cast<uint32_t>(v.mx_class));
    put_u32_le(flags, 0);
    mat_sub_element(body, 6 /*miUINT32*/, flags, false);
    Bytes dims;
    for (int32_t d : v.dims) put_u32_le(dims, static_cast<uint32_t>(d));
    mat_sub_element(body, 5 /*miINT32*/, dims, false);
    mat_sub_element(body, 1 /*miINT8*/, Bytes(v.name.begin(), v.name.end()));
    mat_sub_element(body, static_cast<uint32_t>(v.data_type), v.data, false);
    Bytes el;
    put_u32_le(el, 14 /*miMATRIX*/);
    put_u32_le(el, static_cast<uint32_t>(body.size()));
    el.insert(el.end(), body.begin(), body.end());
    return el;
}

inline Bytes make_mat(const std::vector<MatVar>& vars, bool compressed) {
    Bytes b = mat_header();
    for (const auto& v : vars) {
        const Bytes el = mat_matrix_element(v);
        if (!compressed) {
            b.insert(b.end(), el.begin(), el.end());
            continue;
        }
        const Bytes z = deflate_bytes(el, false);
        put_u32_le(b, 15 /*miCOMPRESSED*/);
        put_u32_le(b, static_cast<uint32_t>(z.size()));
        b.insert(b.end(), z.begin(), z.end());
    }
    return b;
}

inline Bytes doubles(const std::vector<double>& v) {
    Bytes b(v.size() * 8);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

// ---- PPM -------------------------------------------------------------------------------------------------------
inline Bytes make_ppm(int w, int h, const Bytes& rgb, const std::string& comment = "") {
    std::string head = "P6\n" + (comment.empty() ? "" : "# " + comment + "\n") + std::to_string(w) + " " +
                       std::to_string(h) + "\n255\n";
    Bytes b(head.begin(), head.end());
    b.insert(b.end(), rgb.begin(), rgb.end());
    return b;
}

// The message of the DataError `fn` throws; "" if it throws nothing, a marked message for any other exception.
template <class Fn>
std::string data_error_of(Fn fn) {
    try {
        fn();
    } catch (const cw::data::DataError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("<other exception> ") + e.what();
    }
    return "";
}

}  // namespace cw_fixtures
