#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "nn/safetensors.h"
#include "tests/test_util.h"

using namespace cw;
using cw_test::error_of;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;
using Bytes = std::vector<uint8_t>;

namespace {

// A file as docs/protocols/safetensors.md §1 lays it out: u64 LE header length, header, data.
Bytes raw(const std::string& header, const Bytes& data = {}) {
    Bytes out(8 + header.size() + data.size());
    for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));
    std::copy(header.begin(), header.end(), out.begin() + 8);
    std::copy(data.begin(), data.end(), out.begin() + 8 + header.size());
    return out;
}

Bytes zeros(size_t n) { return Bytes(n, 0); }

std::string parse_error(const Bytes& bytes) {
    return error_of<st::FormatError>([&] { st::parse(bytes.data(), bytes.size(), "bad.safetensors"); });
}

// Every rejection names the file, says what was wrong and stays on one line.
#define CHECK_REJECTS(bytes, fragment)                                         \
    do {                                                                       \
        const std::string msg_ = parse_error(bytes);                           \
        CHECK_THAT(msg_, Contains("bad.safetensors: ") && Contains(fragment)); \
        CHECK(msg_.find('\n') == std::string::npos);                           \
    } while (0)

// One F32 tensor "t" of shape [n] at data_offsets [0, 4n]; `entry` overrides the whole entry.
std::string one_tensor(const std::string& entry) { return "{\"t\":" + entry + "}"; }

Bytes spec_vector(const std::string& json, size_t padded_len, const Bytes& data) {
    std::string h = json;
    h.resize(padded_len, ' ');
    return raw(h, data);
}

const Bytes kValues012345 = {0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64};

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/cw_st_test_XXXXXX";
        REQUIRE(mkdtemp(tmpl) != nullptr);
        path = tmpl;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

bool exists(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0;
}

uint16_t u16_le(const st::TensorRecord& t, size_t i) { return t.bytes[2 * i] | (t.bytes[2 * i + 1] << 8); }

st::TensorRecord record(st::DType d, std::vector<int64_t> shape, Bytes bytes) {
    st::TensorRecord t;
    t.dtype = d;
    t.shape = std::move(shape);
    t.bytes = std::move(bytes);
    return t;
}

}  // namespace

// ---- the byte-exact vectors of docs/protocols/safetensors.md §2 ----------------------------------------------

TEST_CASE("safetensors spec vector 1: one F32 tensor [1,2,3]", "[safetensors]") {
    const std::string json = R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})";
    REQUIRE(json.size() == 64);
    const Bytes expected = spec_vector(json, 64, kValues012345);
    REQUIRE(expected[0] == 64);

    st::File f;
    f.tensors["attn.0"] = st::from_f32({0, 1, 2, 3, 4, 5}, {1, 2, 3});
    CHECK(st::serialize(f) == expected);

    const st::File back = st::parse(expected.data(), expected.size(), "v1");
    REQUIRE(back.tensors.size() == 1);
    const st::TensorRecord& t = back.tensors.at("attn.0");
    CHECK(t.dtype == st::DType::F32);
    CHECK(t.shape == std::vector<int64_t>{1, 2, 3});
    CHECK(st::to_f32(t) == std::vector<float>{0, 1, 2, 3, 4, 5});
    CHECK(back.metadata.empty());
}

TEST_CASE("safetensors spec vector 2: header padded with 7 spaces", "[safetensors]") {
    const std::string json = R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}})";
    REQUIRE(json.size() == 65);
    const Bytes expected = spec_vector(json, 72, kValues012345);
    REQUIRE(expected[0] == 72);

    st::File f;
    f.tensors["attn0"] = st::from_f32({0, 1, 2, 3, 4, 5}, {1, 1, 2, 3});
    CHECK(st::serialize(f) == expected);

    const st::File back = st::parse(expected.data(), expected.size(), "v2");
    CHECK(back.tensors.at("attn0").shape == std::vector<int64_t>{1, 1, 2, 3});
    CHECK(st::to_f32(back.tensors.at("attn0")) == std::vector<float>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("safetensors spec vector 3: empty file", "[safetensors]") {
    const Bytes expected = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
    CHECK(st::serialize(st::File{}) == expected);
    const st::File back = st::parse(expected.data(), expected.size(), "v3");
    CHECK(back.tensors.empty());
    CHECK(back.metadata.empty());
}

// ---- round trips ----------------------------------------------------------------------------------------------

TEST_CASE("safetensors round trip with metadata and many dtypes", "[safetensors]") {
    st::File f;
    f.metadata = {{"arch", "preact_resnet18"},
                  {"normalize_mean", "[0.4914, 0.4822, 0.4465]"},
                  {"note", "quotes \" backslash \\ newline \n unicode \xc3\xa9"}};
    f.tensors["conv1.weight"] = st::from_f32({1.5f, -2.f, 3.25f, 0.f}, {1, 1, 2, 2});
    f.tensors["bn.num_batches_tracked"] = st::from_i64_scalar(123456789012345LL);
    f.tensors["half"] = record(st::DType::F16, {3}, {0x00, 0x3C, 0x00, 0xC1, 0xFF, 0x7B});
    f.tensors["brain"] = record(st::DType::BF16, {1}, {0x80, 0x3F});
    f.tensors["mask"] = record(st::DType::BOOL, {2, 2}, {1, 0, 0, 1});
    f.tensors["bytes"] = record(st::DType::U8, {5}, {1, 2, 3, 4, 5});
    f.tensors["wide"] = record(st::DType::F64, {1}, {0, 0, 0, 0, 0, 0, 0xF0, 0x3F});
    f.tensors["empty"] = record(st::DType::F32, {0, 7}, {});
    f.tensors["weird \"name\"/\xe2\x82\xac"] = record(st::DType::I16, {1}, {0xFE, 0xFF});

    const Bytes bytes = st::serialize(f);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
    CHECK((8 + n) % 8 == 0);
    CHECK(std::string(bytes.begin() + 8, bytes.begin() + 24) == "{\"__metadata__\":");

    const st::File back = st::parse(bytes.data(), bytes.size(), "roundtrip");
    CHECK(back.metadata == f.metadata);
    REQUIRE(back.tensors.size() == f.tensors.size());
    for (const auto& [name, t] : f.tensors) {
        INFO(name);
        const st::TensorRecord& b = back.tensors.at(name);
        CHECK(b.dtype == t.dtype);
        CHECK(b.shape == t.shape);
        CHECK(b.bytes == t.bytes);
    }
    CHECK(st::to_i64_scalar(back.tensors.at("bn.num_batches_tracked")) == 123456789012345LL);
    CHECK(back.tensors.at("bn.num_batches_tracked").shape.empty());
    CHECK(st::serialize(back) == bytes);

    TempDir dir;
    const std::string path = dir.path + "/model.safetensors";
    st::write_file(path, f);
    const st::File from_disk = st::read_file(path);
    CHECK(st::serialize(from_disk) == bytes);
}

TEST_CASE("safetensors reader accepts any key order, unpadded headers and trailing spaces", "[safetensors]") {
    // Data laid out in reverse name order, metadata last, extra spaces and newlines inside the JSON.
    const std::string h =
        "{ \"b\" : {\"data_offsets\":[0,4],\"shape\":[],\"dtype\":\"I32\"},\n"
        "\"a\":{\"shape\":[2],\"dtype\":\"U8\",\"data_offsets\":[4,6]},"
        "\"__metadata__\":{\"k\":\"v\"}}   ";
    const Bytes file = raw(h, {7, 0, 0, 0, 9, 8});
    const st::File f = st::parse(file.data(), file.size(), "order");
    CHECK(st::to_i64_scalar(f.tensors.at("b")) == 7);
    CHECK(f.tensors.at("a").bytes == Bytes{9, 8});
    CHECK(f.metadata.at("k") == "v");
}

TEST_CASE("safetensors zero-size tensors occupy no bytes anywhere consistent", "[safetensors]") {
    const std::string h = R"({"z0":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                          R"("a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                          R"("z1":{"dtype":"F64","shape":[3,0],"data_offsets":[2,2]},)"
                          R"("b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]},)"
                          R"("z2":{"dtype":"I64","shape":[0,5],"data_offsets":[3,3]}})";
    const Bytes file = raw(h, {1, 2, 3});
    const st::File f = st::parse(file.data(), file.size(), "zeros");
    CHECK(f.tensors.size() == 5);
    CHECK(f.tensors.at("z1").bytes.empty());
    CHECK(f.tensors.at("b").bytes == Bytes{3});

    // Only zero-size tensors, no data at all.
    const Bytes only = raw(R"({"z":{"dtype":"F32","shape":[4,0],"data_offsets":[0,0]}})");
    CHECK(st::parse(only.data(), only.size(), "zeros").tensors.at("z").shape == std::vector<int64_t>{4, 0});

    // But not inside another tensor's bytes, nor past the end of the buffer.
    CHECK_REJECTS(raw(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                      R"("z":{"dtype":"U8","shape":[0],"data_offsets":[1,1]}})",
                      {1, 2}),
                  "overlap");
    CHECK_REJECTS(raw(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                      R"("z":{"dtype":"U8","shape":[0],"data_offsets":[3,3]}})",
                      {1, 2}),
                  "outside");
}

// ---- validation -------------------------------------------------------------------------------------------

TEST_CASE("safetensors rejects bad framing", "[safetensors]") {
    SECTION("shorter than 8 bytes") {
        CHECK_REJECTS(Bytes{}, "shorter than the 8-byte header length");
        CHECK_REJECTS(Bytes({2, 0, 0, 0, 0}), "shorter than the 8-byte header length");
    }
    SECTION("header length beyond the file") {
        Bytes b = raw("{}      ");
        b[0] = 0;
        b[4] = 25;  // 25 << 32 = 107374182400
        CHECK(parse_error(b) ==
              "bad.safetensors: header length 107374182400 exceeds file size 16 (truncated or not a "
              "safetensors file)");
        Bytes huge = raw("{}");
        for (int i = 0; i < 8; ++i) huge[i] = 0xFF;
        CHECK_REJECTS(huge, "exceeds file size");
        Bytes one_more = raw("{}");
        one_more[0] = 3;
        CHECK_REJECTS(one_more, "exceeds file size");
    }
    SECTION("header length over the 100,000,000-byte limit") {
        // Big enough that the file-size check passes and the limit is what trips.
        Bytes b(8 + st::kMaxHeaderBytes + 1, ' ');
        const uint64_t n = st::kMaxHeaderBytes + 1;
        for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(n >> (8 * i));
        b[8] = '{';
        CHECK_REJECTS(b, "exceeds the limit of 100000000 bytes");
    }
    SECTION("header does not start with '{'") {
        CHECK_REJECTS(raw(""), "does not start with '{'");
        CHECK_REJECTS(raw(" {}"), "does not start with '{'");
        CHECK_REJECTS(raw("[]"), "does not start with '{'");
        CHECK_REJECTS(raw("\xEF\xBB\xBF{}"), "does not start with '{'");
    }
}

TEST_CASE("safetensors rejects invalid or over-nested JSON", "[safetensors]") {
    CHECK_REJECTS(raw("{\"a\":"), "not valid JSON");
    CHECK_REJECTS(raw("{} x"), "not valid JSON");
    CHECK_REJECTS(raw(std::string("{}\0\0", 4)), "NUL byte at header byte 2");
    CHECK_REJECTS(raw(std::string("{}\0{\"x\":1}", 10)), "NUL byte");  // nlohmann alone stops at the NUL
    CHECK_REJECTS(raw("{\"\xff\":1}"), "not valid JSON");  // invalid UTF-8
    CHECK_REJECTS(raw("{\"a\":tru}"), "not valid JSON");
    CHECK_REJECTS(raw("{\"a\":1e999}"), "not valid JSON");  // number overflow
    CHECK_REJECTS(raw("{\"a\":{\"shape\":[[1]]}}"), "nested deeper");
    CHECK_REJECTS(raw("{\"a\":" + std::string(100000, '[')), "nested deeper");
    CHECK_REJECTS(raw("{\"a\":3}"), "entry is not a JSON object");
}

TEST_CASE("safetensors rejects duplicate keys", "[safetensors]") {
    const std::string e = R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
    CHECK_REJECTS(raw("{\"t\":" + e + ",\"t\":" + e + "}", {1}), "duplicate key 't'");
    CHECK_REJECTS(raw(R"({"t":{"dtype":"U8","dtype":"I8","shape":[1],"data_offsets":[0,1]}})", {1}),
                  "duplicate key 'dtype'");
    CHECK_REJECTS(raw(R"({"__metadata__":{"a":"1","a":"2"}})"), "duplicate key 'a'");
    CHECK_REJECTS(raw(R"({"__metadata__":{},"__metadata__":{}})"), "duplicate key '__metadata__'");
}

TEST_CASE("safetensors rejects malformed __metadata__", "[safetensors]") {
    CHECK_REJECTS(raw(R"({"__metadata__":["a"]})"), "__metadata__ is not a JSON object");
    CHECK_REJECTS(raw(R"({"__metadata__":null})"), "__metadata__ is not a JSON object");
    CHECK_REJECTS(raw(R"({"__metadata__":{"epochs":200}})"), "__metadata__ value for 'epochs' is not a string");
    CHECK_REJECTS(raw(R"({"__metadata__":{"x":{}}})"), "is not a string");
}

TEST_CASE("safetensors rejects malformed tensor entries", "[safetensors]") {
    const Bytes four = zeros(4);
    SECTION("keys") {
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1]})"), four), "exactly the keys");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1})"), four),
                      "exactly the keys");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1],"offsets":[0,4]})"), four), "exactly the keys");
        CHECK_REJECTS(raw(one_tensor("[]"), four), "tensor 't': entry is not a JSON object");
    }
    SECTION("dtype") {
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F128","shape":[1],"data_offsets":[0,4]})"), four),
                      "tensor 't': unknown dtype 'F128'");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"f32","shape":[1],"data_offsets":[0,4]})"), four),
                      "unknown dtype");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":4,"shape":[1],"data_offsets":[0,4]})"), four),
                      "dtype is not a string");
    }
    SECTION("shape") {
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":1,"data_offsets":[0,4]})"), four),
                      "shape is not an array");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})"), four),
                      "shape has a negative value -1");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1.0],"data_offsets":[0,4]})"), four),
                      "shape must contain non-negative integers");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":["1"],"data_offsets":[0,4]})"), four),
                      "shape must contain non-negative integers");
        CHECK_REJECTS(
            raw(one_tensor(R"({"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,4]})"), four),
            "too large");
        CHECK_REJECTS(
            raw(one_tensor(R"({"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,4]})"), four),
            "overflows 64 bits");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]})")),
                      "overflows 64 bits");  // 2^61 * 8 wraps to 0
    }
    SECTION("data_offsets") {
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":4})"), four),
                      "data_offsets is not an array of two integers");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4,8]})"), four),
                      "data_offsets is not an array of two integers");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[-4,0]})"), four),
                      "negative value -4");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4.5]})"), four),
                      "non-negative integers");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[4,0]})"), four),
                      "begin after end");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[2],"data_offsets":[0,4]})"), four),
                      "span 4 bytes but F32 shape [2] needs 8");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0,8]})"), four),
                      "outside the 4-byte data buffer");
        CHECK_REJECTS(raw(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,)"
                                     R"(18446744073709551615]})"),
                          four),
                      "outside");
    }
}

TEST_CASE("safetensors requires tensors to tile the data buffer exactly", "[safetensors]") {
    auto entry = [](const char* name, int b, int e) {
        return "\"" + std::string(name) + "\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(e - b) +
               "],\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
    };
    const Bytes four = zeros(4);
    CHECK_REJECTS(raw("{" + entry("a", 1, 4) + "}", four), "gap of 1 unused bytes");
    CHECK_REJECTS(raw("{" + entry("a", 0, 1) + "," + entry("b", 2, 4) + "}", four),
                  "gap of 1 unused bytes in the data buffer before tensor 'b'");
    CHECK_REJECTS(raw("{" + entry("a", 0, 3) + "," + entry("b", 2, 4) + "}", four),
                  "tensor 'b' data_offsets [2,4] overlap tensor 'a'");
    CHECK_REJECTS(raw("{" + entry("a", 0, 4) + "," + entry("b", 0, 4) + "}", four), "overlap");
    CHECK_REJECTS(raw("{" + entry("a", 0, 3) + "}", four), "trailing bytes after the last tensor");
    CHECK_REJECTS(raw("{}", four), "tensors cover only 0");
    // The same, valid.
    const Bytes ok = raw("{" + entry("b", 2, 4) + "," + entry("a", 0, 2) + "}", {1, 2, 3, 4});
    CHECK(st::parse(ok.data(), ok.size(), "x").tensors.at("b").bytes == Bytes{3, 4});
}

TEST_CASE("safetensors error messages stay one line for hostile names", "[safetensors]") {
    const std::string name = "evil\\nname" + std::string(500, 'x');
    const std::string msg =
        parse_error(raw("{\"" + name + "\":{\"dtype\":\"Q\",\"shape\":[],\"data_offsets\":[0,0]}}"));
    CHECK_THAT(msg, Contains("evil\\x0aname") && Contains("...") && Contains("unknown dtype 'Q'"));
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.size() < 400);
}

// ---- files on disk ----------------------------------------------------------------------------------------

TEST_CASE("safetensors write_file is atomic and reports unwritable paths", "[safetensors]") {
    TempDir dir;
    const std::string path = dir.path + "/ckpt.safetensors";
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    st::File f;
    f.metadata["arch"] = "mlp";
    f.tensors["w"] = st::from_f32({1, 2}, {2});

    st::write_file(path, f);
    CHECK(exists(path));
    CHECK_FALSE(exists(tmp));
    CHECK(st::read_file(path).metadata.at("arch") == "mlp");

    // Overwrite in place.
    f.tensors["w"] = st::from_f32({3, 4, 5}, {3});
    st::write_file(path, f);
    CHECK_FALSE(exists(tmp));
    CHECK(st::to_f32(st::read_file(path).tensors.at("w")) == std::vector<float>{3, 4, 5});

    const std::string missing = dir.path + "/no/such/dir/ckpt.safetensors";
    CHECK_THAT(error_of<st::IoError>([&] { st::write_file(missing, f); }),
               Equals(missing + ": cannot create " + missing + ".tmp." + std::to_string(::getpid()) +
                      ": No such file or directory (does the directory exist?)"));
    CHECK_FALSE(exists(missing));

    // Refused before anything touches the disk: the record is inconsistent.
    st::File bad;
    bad.tensors["w"] = record(st::DType::F32, {3}, {1, 2, 3});
    CHECK_THAT(error_of<st::FormatError>([&] { st::write_file(path, bad); }),
               Contains(path) && Contains("needs 12"));
    CHECK_FALSE(exists(tmp));
    CHECK(st::read_file(path).tensors.at("w").shape == std::vector<int64_t>{3});

    // Renaming over a directory fails after the temp file was written: it must be cleaned up.
    const std::string dir_target = dir.path + "/a_directory";
    REQUIRE(::mkdir(dir_target.c_str(), 0755) == 0);
    REQUIRE_THROWS_AS(st::write_file(dir_target, f), st::IoError);
    CHECK_FALSE(exists(dir_target + ".tmp." + std::to_string(::getpid())));
}

TEST_CASE("safetensors read_file errors name the path", "[safetensors]") {
    TempDir dir;
    const std::string missing = dir.path + "/missing.safetensors";
    CHECK_THAT(error_of<st::IoError>([&] { st::read_file(missing); }), Contains(missing));
    CHECK_THAT(error_of<st::IoError>([&] { st::read_file(dir.path); }), Contains("not a regular file"));

    st::File f;
    f.tensors["w"] = st::from_f32({1, 2, 3, 4}, {4});
    const std::string path = dir.path + "/trunc.safetensors";
    st::write_file(path, f);
    REQUIRE(::truncate(path.c_str(), 20) == 0);
    CHECK_THAT(error_of<st::FormatError>([&] { st::read_file(path); }),
               StartsWith(path + ": ") && Contains("exceeds file size"));
    REQUIRE(::truncate(path.c_str(), 3) == 0);
    CHECK_THAT(error_of<st::FormatError>([&] { st::read_file(path); }), Contains("shorter than"));

    // Both error kinds are cw::Error, which is what callers catch.
    REQUIRE_THROWS_AS(st::read_file(missing), cw::Error);
}

// ---- conversions ------------------------------------------------------------------------------------------

TEST_CASE("safetensors to_f32 converts F16, BF16 and F64", "[safetensors]") {
    // F16: 1.0, -2.5, 65504 (largest finite), 2^-24 (smallest subnormal), -0, +inf
    const st::TensorRecord h =
        record(st::DType::F16, {6}, {0x00, 0x3C, 0x00, 0xC1, 0xFF, 0x7B, 0x01, 0x00, 0x00, 0x80, 0x00, 0x7C});
    const std::vector<float> v = st::to_f32(h);
    CHECK(v[0] == 1.0f);
    CHECK(v[1] == -2.5f);
    CHECK(v[2] == 65504.0f);
    CHECK(v[3] == std::ldexp(1.0f, -24));
    CHECK(v[4] == 0.0f);
    CHECK(std::signbit(v[4]));
    CHECK(std::isinf(v[5]));
    CHECK(std::isnan(st::to_f32(record(st::DType::F16, {}, {0x01, 0x7E}))[0]));
    CHECK(st::to_f32(record(st::DType::F16, {}, {0xFF, 0x03}))[0] == 1023 * std::ldexp(1.0f, -24));  // subnormal
    CHECK(st::to_f32(record(st::DType::F16, {}, {0x00, 0x04}))[0] == std::ldexp(1.0f, -14));  // smallest normal

    // BF16: 0x3F80 = 1.0, 0xC020 = -2.5, 0x4049 = 3.140625
    const st::TensorRecord b = record(st::DType::BF16, {3}, {0x80, 0x3F, 0x20, 0xC0, 0x49, 0x40});
    CHECK(st::to_f32(b) == std::vector<float>{1.0f, -2.5f, 3.140625f});
    CHECK(u16_le(b, 0) == 0x3F80);

    // F64 1.0 and -0.1
    const st::TensorRecord d = record(
        st::DType::F64, {2}, {0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0xB9, 0xBF});
    CHECK(st::to_f32(d) == std::vector<float>{1.0f, -0.1f});

    CHECK_THAT(error_of<st::FormatError>([&] { st::to_f32(st::from_i64_scalar(3), "bn.num_batches_tracked"); }),
               Contains("bn.num_batches_tracked") && Contains("I64"));
    REQUIRE_THROWS_AS(st::to_f32(record(st::DType::F32, {2}, {0, 0, 0})), st::FormatError);
}

TEST_CASE("safetensors from_f32 and integer scalar helpers", "[safetensors]") {
    const st::TensorRecord t = st::from_f32({1.0f, -2.5f}, {2, 1});
    CHECK(t.dtype == st::DType::F32);
    CHECK(t.bytes == Bytes{0, 0, 0x80, 0x3F, 0, 0, 0x20, 0xC0});
    REQUIRE_THROWS_AS(st::from_f32({1, 2, 3}, {2, 2}), cw::ShapeError);
    CHECK(st::to_f32(st::from_f32({}, {0, 3})).empty());

    const st::TensorRecord s = st::from_i64_scalar(-5);
    CHECK(s.dtype == st::DType::I64);
    CHECK(s.shape.empty());
    CHECK(s.bytes == Bytes{0xFB, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
    CHECK(st::to_i64_scalar(s) == -5);
    CHECK(st::to_i64_scalar(record(st::DType::I64, {1}, {42, 0, 0, 0, 0, 0, 0, 0})) == 42);
    CHECK(st::to_i64_scalar(record(st::DType::I32, {}, {0xFE, 0xFF, 0xFF, 0xFF})) == -2);
    REQUIRE_THROWS_AS(st::to_i64_scalar(st::from_f32({1}, {})), st::FormatError);
    REQUIRE_THROWS_AS(st::to_i64_scalar(record(st::DType::I64, {2}, zeros(16))), st::FormatError);
}

TEST_CASE("safetensors integer tensors: little-endian bytes, widening and narrowing", "[safetensors]") {
    const st::TensorRecord a = st::from_i32({1, -2}, {2});
    CHECK(a.dtype == st::DType::I32);
    CHECK(a.bytes == Bytes{1, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF});
    const st::TensorRecord b = st::from_i64({258, -1}, {1, 2});
    CHECK(b.dtype == st::DType::I64);
    CHECK(b.shape == std::vector<int64_t>{1, 2});
    CHECK(b.bytes == Bytes{2, 1, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
    CHECK(st::to_i64(a) == std::vector<int64_t>{1, -2});
    CHECK(st::to_i32(b) == std::vector<int32_t>{258, -1});
    REQUIRE_THROWS_AS(st::from_i32({1, 2, 3}, {2}), cw::ShapeError);
    // A dataset index past 2^31 cannot become a label: named, not wrapped.
    CHECK_THAT(error_of<st::FormatError>([] { st::to_i32(st::from_i64({int64_t{1} << 31}, {1}), "labels"); }),
               Catch::Contains("labels") && Catch::Contains("2147483648") && Catch::Contains("32 bits"));
    CHECK_THAT(error_of<st::FormatError>([] { st::to_i64(st::from_f32({1}, {1}), "labels"); }),
               Catch::Contains("labels") && Catch::Contains("F32"));
    REQUIRE_THROWS_AS(st::to_i32(record(st::DType::I32, {2}, zeros(4))), st::FormatError);
}

TEST_CASE("safetensors dtype names and sizes", "[safetensors]") {
    const std::pair<const char*, size_t> table[] = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
        {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};
    for (const auto& [name, size] : table) {
        const st::DType d = st::parse_dtype(name, "ctx");
        CHECK(std::string(st::dtype_name(d)) == name);
        CHECK(st::dtype_size(d) == size);
    }
    CHECK_THAT(error_of<st::FormatError>([&] { st::parse_dtype("complex64", "m.safetensors: tensor 'x'"); }),
               StartsWith("m.safetensors: tensor 'x': unknown dtype 'complex64'"));
}

TEST_CASE("safetensors serialize refuses what it could not write faithfully", "[safetensors]") {
    st::File f;
    f.tensors["__metadata__"] = st::from_f32({1}, {1});
    CHECK_THAT(error_of<st::FormatError>([&] { st::serialize(f, "out.safetensors"); }),
               Contains("out.safetensors") && Contains("reserved"));

    st::File g;
    g.tensors["bad\xff"] = st::from_f32({1}, {1});
    CHECK_THAT(error_of<st::FormatError>([&] { st::serialize(g, "out.safetensors"); }),
               Contains("not valid UTF-8"));

    st::File h;
    h.tensors["neg"] = record(st::DType::U8, {-1}, {});
    CHECK_THAT(error_of<st::FormatError>([&] { st::serialize(h, "out.safetensors"); }), Contains("negative"));

    st::File k;
    k.tensors["wrap"] = record(st::DType::F64, {int64_t(1) << 61}, {});  // 2^61 * 8 bytes wraps to 0
    CHECK_THAT(error_of<st::FormatError>([&] { st::serialize(k, "out.safetensors"); }), Contains("overflows"));
}

TEST_CASE("safetensors strip_prefixes", "[safetensors]") {
    CHECK(st::strip_prefixes("module.conv1.weight") == "conv1.weight");
    CHECK(st::strip_prefixes("model.layer1.0.bn1.bias") == "layer1.0.bn1.bias");
    CHECK(st::strip_prefixes("module.model.linear.weight") == "linear.weight");
    CHECK(st::strip_prefixes("model.module.model.bn.running_mean") == "bn.running_mean");
    CHECK(st::strip_prefixes("conv1.weight") == "conv1.weight");
    CHECK(st::strip_prefixes("models.x") == "models.x");
    CHECK(st::strip_prefixes("linear.module.weight") == "linear.module.weight");
    CHECK(st::strip_prefixes("module") == "module");
    CHECK(st::strip_prefixes("") == "");
}
