// Parsers of the raw formats on in-memory buffers: IDX, gzip, CIFAR records, .npy, MAT v5, PPM, JPEG.
#include <catch2/catch.hpp>

#include <stb/stb_image_write.h>

#include "datasets/cifar_records.h"
#include "datasets/error.h"
#include "datasets/idx.h"
#include "datasets/image.h"
#include "datasets/inflate.h"
#include "datasets/mat.h"
#include "datasets/npy.h"
#include "tests/test_datasets_fixtures.h"

using namespace cw::data;
using namespace cw_fixtures;

TEST_CASE("IDX: a valid file parses to its dims and values", "[datasets]") {
    const Bytes values{1, 2, 3, 4, 5, 6};
    const Bytes file = make_idx({3, 2}, values);
    const IdxArray a = parse_idx(file.data(), file.size(), "x.idx");
    CHECK(a.dims == std::vector<int64_t>{3, 2});
    CHECK(a.values == values);
}

TEST_CASE("IDX: corrupt files give one-line errors naming the file", "[datasets]") {
    const Bytes good = make_idx({2, 2}, {1, 2, 3, 4});
    Bytes wrong_magic = good;
    wrong_magic[0] = 7;
    CHECK_THAT(data_error_of([&] { parse_idx(wrong_magic.data(), wrong_magic.size(), "w.idx"); }),
               Catch::StartsWith("w.idx: wrong magic number"));
    Bytes truncated(good.begin(), good.end() - 1);
    CHECK_THAT(data_error_of([&] { parse_idx(truncated.data(), truncated.size(), "t.idx"); }),
               Catch::StartsWith("t.idx: truncated"));
    Bytes trailing = good;
    trailing.push_back(9);
    CHECK_THAT(data_error_of([&] { parse_idx(trailing.data(), trailing.size(), "x"); }),
               Catch::Contains("trailing bytes"));
    const Bytes ints = make_idx({1}, {0, 0, 0, 1}, 0x0C);
    CHECK_THAT(data_error_of([&] { parse_idx(ints.data(), ints.size(), "x"); }), Catch::Contains("0x0c"));
    const Bytes gz = deflate_bytes(good, true);
    CHECK_THAT(data_error_of([&] { parse_idx(gz.data(), gz.size(), "x"); }), Catch::Contains("gzip"));
    const Bytes huge = make_idx({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {});
    CHECK_THAT(data_error_of([&] { parse_idx(huge.data(), huge.size(), "x"); }), Catch::Contains("truncated"));
    CHECK_THAT(data_error_of([&] { parse_idx(good.data(), 2, "x"); }), Catch::Contains("not an IDX file"));
}

TEST_CASE("gzip/zlib: round trip, truncation and size caps", "[datasets]") {
    Bytes payload(10000);
    for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 31 % 251);
    const Bytes gz = deflate_bytes(payload, true);
    REQUIRE(is_gzip(gz.data(), gz.size()));
    CHECK(inflate_all(gz.data(), gz.size(), ZFormat::Gzip, "p.gz", 1 << 20) == payload);
    const Bytes z = deflate_bytes(payload, false);
    CHECK(inflate_all(z.data(), z.size(), ZFormat::Zlib, "p.z", payload.size()) == payload);
    CHECK(inflate_prefix(z.data(), z.size(), ZFormat::Zlib, "p.z", 8) == Bytes(payload.begin(), payload.begin() + 8));
    CHECK_THAT(data_error_of([&] { inflate_all(z.data(), z.size(), ZFormat::Zlib, "p.z", payload.size() - 1); }),
               Catch::Contains("more than the expected"));
    CHECK_THAT(data_error_of([&] { inflate_all(gz.data(), gz.size() / 2, ZFormat::Gzip, "p.gz", 1 << 20); }),
               Catch::StartsWith("p.gz: truncated gzip stream"));
    Bytes corrupt = z;
    corrupt[corrupt.size() / 2] ^= 0xff;
    corrupt[corrupt.size() / 2 + 1] ^= 0x55;
    CHECK_THAT(data_error_of([&] { inflate_all(corrupt.data(), corrupt.size(), ZFormat::Zlib, "c", 1 << 20); }),
               Catch::StartsWith("c: "));
}

TEST_CASE("CIFAR records: labels and CHW pixels of every record", "[datasets]") {
    const std::vector<int> labels{3, 0, 9, 1, 2};
    const Bytes file = make_cifar_records({labels});
    const Records r = parse_records(file.data(), file.size(), "b.bin", RecordLayout{{10}});
    REQUIRE(r.count == 5);
    CHECK(r.labels[0] == std::vector<int32_t>{3, 0, 9, 1, 2});
    CHECK(r.pixels[2 * 3072 + 1024 * 1 + 32 * 4 + 7] == pattern(2, 1, 4, 7));
}

TEST_CASE("CIFAR records: truncated, empty and out-of-range files are rejected", "[datasets]") {
    const Bytes file = make_cifar_records({{1, 2}});
    CHECK_THAT(data_error_of([&] { parse_records(file.data(), file.size() - 5, "b.bin", RecordLayout{{10}}); }),
               Catch::StartsWith("b.bin: truncated"));
    CHECK_THAT(data_error_of([&] { parse_records(file.data(), 0, "b.bin", RecordLayout{{10}}); }),
               Catch::Contains("empty"));
    const Bytes bad = make_cifar_records({{1, 12}});
    CHECK_THAT(data_error_of([&] { parse_records(bad.data(), bad.size(), "b.bin", RecordLayout{{10}}); }),
               Catch::Contains("record 1: label 12 out of range [0, 10)"));
    // CIFAR-100: the coarse byte must be < 20 and the fine byte < 100.
    const Bytes c100 = make_cifar_records({{19, 5}, {99, 3}});
    const Records r = parse_records(c100.data(), c100.size(), "c", RecordLayout{{20, 100}});
    CHECK(r.labels[0] == std::vector<int32_t>{19, 5});
    CHECK(r.labels[1] == std::vector<int32_t>{99, 3});
    CHECK_THAT(data_error_of([&] { parse_records(c100.data(), c100.size(), "c", RecordLayout{{20, 20}}); }),
               Catch::Contains("label 99 out of range"));
}

TEST_CASE("npy: v1 and v2 headers, dtypes and shapes", "[datasets]") {
    const Bytes payload{1, 2, 3, 4, 5, 6};
    for (int major : {1, 2, 3}) {
        const Bytes file = make_npy("|u1", {2, 3}, payload, major);
        const NpyArray a = parse_npy(file.data(), file.size(), "a.npy");
        CHECK(a.header.shape == std::vector<int64_t>{2, 3});
        CHECK(a.header.kind == 'u');
        CHECK(a.header.item_size == 1);
        CHECK(a.header.data_offset % 64 == 0);
        CHECK(a.data == payload);
    }
    Bytes i8(3 * 8);
    const int64_t vals[3] = {7, -1, 42};
    std::memcpy(i8.data(), vals, sizeof vals);
    const Bytes file = make_npy("<i8", {3}, i8);
    const NpyArray a = parse_npy(file.data(), file.size(), "l.npy");
    CHECK(a.header.shape == std::vector<int64_t>{3});
    CHECK(npy_to_int64(a.header, a.data.data(), 3, "l.npy") == std::vector<int64_t>{7, -1, 42});
    const Bytes scalar = make_npy("<f8", {}, doubles({2.0}));
    const NpyArray s = parse_npy(scalar.data(), scalar.size(), "s.npy");
    CHECK(s.header.numel() == 1);
    CHECK(npy_to_int64(s.header, s.data.data(), 1, "s.npy") == std::vector<int64_t>{2});
}

TEST_CASE("npy: bad headers and payloads are rejected", "[datasets]") {
    const Bytes payload{1, 2, 3, 4};
    auto err = [](const Bytes& f) { return data_error_of([&] { parse_npy(f.data(), f.size(), "x.npy"); }); };
    Bytes bad_magic = make_npy("|u1", {4}, payload);
    bad_magic[1] = 'X';
    CHECK_THAT(err(bad_magic), Catch::StartsWith("x.npy: not a .npy file"));
    Bytes bad_version = make_npy("|u1", {4}, payload);
    bad_version[6] = 9;
    CHECK_THAT(err(bad_version), Catch::Contains("version 9"));
    CHECK_THAT(err(make_npy(">i4", {1}, payload)), Catch::Contains("big-endian"));
    CHECK_THAT(err(make_npy("<c8", {1}, Bytes(8))), Catch::Contains("not supported"));
    CHECK_THAT(err(make_npy("|u1", {5}, payload)), Catch::Contains("truncated"));
    CHECK_THAT(err(make_npy("|u1", {3}, payload)), Catch::Contains("trailing"));
    Bytes broken = make_npy("|u1", {4}, payload);
    const size_t brace = std::string(broken.begin(), broken.end()).find('{');
    broken[brace] = '[';
    CHECK_THAT(err(broken), Catch::Contains("bad .npy header"));
    Bytes short_header = make_npy("|u1", {4}, payload);
    short_header.resize(20);
    CHECK_THAT(err(short_header), Catch::Contains("truncated"));
    CHECK_THAT(err(make_npy("|u1", {4000000000000, 4000000000000}, payload)), Catch::Contains("impossibly large"));
}

TEST_CASE("MAT v5: numeric variables from uncompressed and compressed files", "[datasets]") {
    const Bytes x{10, 20, 30, 40, 50, 60};
    const std::vector<MatVar> vars{
        {"X", 9 /*uint8*/, {2, 3}, 2 /*miUINT8*/, x},
        {"y", 6 /*double*/, {3, 1}, 9 /*miDOUBLE*/, doubles({1, 10, 4})},
        {"yy", 6 /*double stored as uint8, as MATLAB does*/, {1, 2}, 2, {7, 8}},
    };
    for (bool compressed : {false, true}) {
        const Bytes file = make_mat(vars, compressed);
        const MatFile m = parse_mat(file.data(), file.size(), "f.mat");
        REQUIRE(m.variables.size() == 3);
        const MatVariable* vx = m.find("X");
        REQUIRE(vx);
        CHECK(vx->mx_class == mxUINT8_CLASS);
        CHECK(vx->dims == std::vector<int64_t>{2, 3});
        CHECK(Bytes(vx->data(), vx->data() + vx->bytes) == x);
        CHECK(mat_to_uint8(*vx, "f.mat") == x);
        const MatVariable* vy = m.find("y");
        REQUIRE(vy);
        CHECK(mat_to_int64(*vy, "f.mat") == std::vector<int64_t>{1, 10, 4});
        CHECK(mat_to_int64(*m.find("yy"), "f.mat") == std::vector<int64_t>{7, 8});
        CHECK(m.find("nope") == nullptr);
    }
}

TEST_CASE("MAT v5: bad files are rejected with a clear message", "[datasets]") {
    const std::vector<MatVar> vars{{"X", 9, {2, 2}, 2, {1, 2, 3, 4}}};
    auto err = [](const Bytes& f) { return data_error_of([&] { parse_mat(f.data(), f.size(), "s.mat"); }); };
    const Bytes plain = make_mat(vars, false);
    const Bytes packed = make_mat(vars, true);
    CHECK_THAT(err(Bytes(plain.begin(), plain.begin() + 100)), Catch::StartsWith("s.mat: not a MAT v5 file"));
    CHECK_THAT(err(Bytes(plain.begin(), plain.end() - 9)), Catch::StartsWith("s.mat: truncated"));
    CHECK_THAT(err(Bytes(packed.begin(), packed.end() - 3)), Catch::Contains("truncated"));
    Bytes big_endian = plain;
    big_endian[126] = 'M';
    big_endian[127] = 'I';
    CHECK_THAT(err(big_endian), Catch::Contains("big-endian"));
    Bytes v73 = plain;
    v73[124] = 0x00;
    v73[125] = 0x02;
    CHECK_THAT(err(v73), Catch::Contains("v7.3"));
    Bytes corrupt = packed;
    for (size_t i = 140; i < corrupt.size() - 4; ++i) corrupt[i] ^= 0x5a;
    CHECK_THAT(err(corrupt), Catch::StartsWith("s.mat"));
    // The real part must fill the dimensions exactly.
    CHECK_THAT(err(make_mat({{"X", 9, {3, 2}, 2, {1, 2, 3, 4}}}, false)), Catch::Contains("dimensions need 6"));
    // A compressed element claiming far more than its bytes can inflate to.
    Bytes bomb = mat_header();
    Bytes inner;
    put_u32_le(inner, 14);
    put_u32_le(inner, 0x7ffffff0u);
    const Bytes z = deflate_bytes(inner, false);
    put_u32_le(bomb, 15);
    put_u32_le(bomb, static_cast<uint32_t>(z.size()));
    bomb.insert(bomb.end(), z.begin(), z.end());
    CHECK_THAT(err(bomb), Catch::Contains("compressed bytes can hold"));
    // Values that do not fit the requested type.
    const Bytes neg = make_mat({{"y", 6, {1, 2}, 9, doubles({1.5, -3})}}, false);
    const MatFile m = parse_mat(neg.data(), neg.size(), "n.mat");
    CHECK_THAT(data_error_of([&] { mat_to_int64(m.variables[0], "n.mat"); }), Catch::Contains("not a whole number"));
}

TEST_CASE("MAT v5: non-numeric arrays are skipped", "[datasets]") {
    // A char array (class 4) between two numeric ones.
    const Bytes file = make_mat({{"a", 9, {1, 1}, 2, {5}}, {"s", 4, {1, 2}, 16, {'h', 'i'}}, {"b", 9, {1, 1}, 2, {6}}},
                                false);
    const MatFile m = parse_mat(file.data(), file.size(), "c.mat");
    REQUIRE(m.variables.size() == 2);
    CHECK(m.variables[0].name == "a");
    CHECK(m.variables[1].name == "b");
}

TEST_CASE("PPM: pixels, comments and errors", "[datasets]") {
    Bytes rgb;
    for (int i = 0; i < 2 * 3 * 3; ++i) rgb.push_back(static_cast<uint8_t>(i * 10));
    const Bytes file = make_ppm(3, 2, rgb, "made by a test");
    const HwcImage img = parse_ppm(file.data(), file.size(), "a.ppm");
    CHECK(img.width == 3);
    CHECK(img.height == 2);
    CHECK(img.pixels == rgb);
    CHECK_THAT(data_error_of([&] { parse_ppm(file.data(), file.size() - 1, "a.ppm"); }),
               Catch::StartsWith("a.ppm: truncated PPM"));
    Bytes p3 = file;
    p3[1] = '3';
    CHECK_THAT(data_error_of([&] { parse_ppm(p3.data(), p3.size(), "a.ppm"); }), Catch::Contains("P6"));
    const std::string deep = "P6 2 2 65535\n";
    const Bytes d(deep.begin(), deep.end());
    CHECK_THAT(data_error_of([&] { parse_ppm(d.data(), d.size(), "a.ppm"); }), Catch::Contains("maxval 65535"));
}

TEST_CASE("crop and resize: inclusive ROI, bounds checked", "[datasets]") {
    HwcImage img;
    img.width = 4;
    img.height = 3;
    img.channels = 1;
    img.pixels = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};
    const HwcImage c = crop(img, 1, 1, 2, 2, "i");
    CHECK(c.width == 2);
    CHECK(c.height == 2);
    CHECK(c.pixels == Bytes{11, 12, 21, 22});
    CHECK_THAT(data_error_of([&] { crop(img, 1, 1, 4, 2, "i"); }), Catch::Contains("not inside"));
    HwcImage flat;
    flat.width = flat.height = 5;
    flat.channels = 3;
    flat.pixels.assign(75, 77);
    const HwcImage r = resize(flat, 2, 3, "f");
    CHECK(r.width == 2);
    CHECK(r.height == 3);
    for (uint8_t p : r.pixels) CHECK(int(p) == 77);
}

TEST_CASE("JPEG decoding through stb_image", "[datasets]") {
    std::vector<uint8_t> rgb(16 * 8 * 3, 0);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 16; ++x) rgb[(y * 16 + x) * 3 + 0] = 200;  // a red image
    Bytes jpeg;
    stbi_write_jpg_to_func(
        [](void* ctx, void* data, int size) {
            auto* out = static_cast<Bytes*>(ctx);
            out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
        },
        &jpeg, 16, 8, 3, rgb.data(), 95);
    const HwcImage img = decode_image(jpeg.data(), jpeg.size(), "r.jpg", 3);
    CHECK(img.width == 16);
    CHECK(img.height == 8);
    CHECK(std::abs(int(img.pixels[0]) - 200) <= 6);
    CHECK(int(img.pixels[1]) <= 6);
    CHECK_THAT(data_error_of([&] { decode_image(jpeg.data(), 20, "r.jpg", 3); }),
               Catch::StartsWith("r.jpg: cannot decode image"));
}
