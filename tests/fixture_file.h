#pragma once
// The safetensors fixtures of tests/fixtures that a tools/ script writes: each file read once per test run, and a
// missing file or tensor is a test failure naming the script or the tensor.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "nn/safetensors.h"
#include "tests/test_nn_util.h"

namespace cw_nn_test {

inline const cw::st::File& fixture_file(const std::string& name, const std::string& script) {
    static std::map<std::string, cw::st::File> files;
    auto it = files.find(name);
    if (it == files.end()) {
        const std::string path = fixture_path(name);
        if (path.empty()) FAIL("tests/fixtures/" << name << " missing (" << script << ")");
        it = files.emplace(name, cw::st::read_file(path)).first;
    }
    return it->second;
}

inline const cw::st::TensorRecord& fixture_record(const cw::st::File& file, const std::string& file_name,
                                                  const std::string& tensor) {
    const auto it = file.tensors.find(tensor);
    if (it == file.tensors.end()) FAIL(file_name << " has no tensor '" << tensor << "'");
    return it->second;
}

inline std::vector<float> fixture_f32(const cw::st::File& file, const std::string& file_name, const std::string& tensor) {
    return cw::st::to_f32(fixture_record(file, file_name, tensor), tensor);
}

// How far a result is from its twin's: max |got − want| / max |want| (the absolute error where want is all 0).
inline double worst_error(const std::vector<float>& got, const std::vector<float>& want) {
    REQUIRE(got.size() == want.size());
    double scale = 0, worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
        worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
    }
    return scale > 0 ? worst / scale : worst;
}

}  // namespace cw_nn_test
