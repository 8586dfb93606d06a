#pragma once
// Reading tests/fixtures/corruptions/ (written by tools/make_corruption_fixtures.py): the inputs, and for every
// case the expected output and the random field the Python reference used.
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/corruptions.h"
#include "datasets/error.h"
#include "datasets/file_io.h"
#include "datasets/npy.h"
#include "tests/test_nn_util.h"

namespace cw_corruption_test {

struct FloatArray {
    std::vector<int64_t> shape;
    std::vector<float> values;
};

inline FloatArray read_f32(const std::string& path) {
    const std::vector<uint8_t> bytes = cw::data::read_file(path);
    const cw::data::NpyArray a = cw::data::parse_npy(bytes.data(), bytes.size(), path);
    if (a.header.kind != 'f' || a.header.item_size != 4) throw cw::data::DataError(path + ": expected float32");
    FloatArray out{a.header.shape, std::vector<float>(size_t(a.header.numel()))};
    std::memcpy(out.values.data(), a.data.data(), out.values.size() * sizeof(float));
    return out;
}

inline cw::data::ChwImage image_from(const FloatArray& a, int64_t index = -1) {
    // [N, C, H, W] with an index, or [C, H, W] without.
    const size_t r = a.shape.size();
    cw::data::ChwImage img(int(a.shape[r - 3]), int(a.shape[r - 2]), int(a.shape[r - 1]));
    const size_t offset = index < 0 ? 0 : size_t(index) * img.pixels.size();
    std::copy(a.values.begin() + offset, a.values.begin() + offset + img.pixels.size(), img.pixels.begin());
    return img;
}

struct Case {
    std::string name;
    int severity = 0;
    std::string input;                // "image:<i>" or "gray"
    std::vector<std::string> fields;  // field array names
    std::string stem() const { return input == "gray" ? "gray" : "s" + std::to_string(severity); }
};

inline std::string fixture_dir() { return cw_nn_test::fixture_path("corruptions"); }

inline std::vector<Case> read_manifest(const std::string& dir) {
    std::ifstream in(dir + "/manifest.txt");
    std::vector<Case> cases;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        Case c;
        words >> c.name >> c.severity >> c.input;
        for (std::string f; words >> f;) c.fields.push_back(f.substr(0, f.find(':')));
        cases.push_back(c);
    }
    return cases;
}

struct Loaded {
    cw::data::ChwImage input, expected;
    cw::data::CorruptionField field;
};

inline Loaded load_case(const std::string& dir, const Case& c) {
    Loaded l;
    if (c.input == "gray") {
        l.input = image_from(read_f32(dir + "/gray.npy"));
    } else {
        l.input = image_from(read_f32(dir + "/images.npy"), std::stoi(c.input.substr(6)));
    }
    l.expected = image_from(read_f32(dir + "/" + c.name + "/" + c.stem() + ".npy"));
    for (const auto& f : c.fields) l.field.arrays[f] = read_f32(dir + "/" + c.name + "/" + c.stem() + "_" + f + ".npy").values;
    return l;
}

inline double max_abs_diff(const cw::data::ChwImage& a, const cw::data::ChwImage& b) {
    double worst = 0;
    for (size_t i = 0; i < a.pixels.size(); ++i) worst = std::max(worst, std::fabs(double(a.pixels[i]) - b.pixels[i]));
    return worst;
}

}  // namespace cw_corruption_test
