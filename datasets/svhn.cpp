// SVHN cropped digits (format 2): a MAT v5 file with X uint8 [32, 32, 3, N] (MATLAB column-major) and y [N, 1]
// holding 1..10, where 10 stands for the digit 0.
#include "datasets/class_names.h"
#include "datasets/error.h"
#include "datasets/file_io.h"
#include "datasets/loaders.h"
#include "datasets/mat.h"
#include "datasets/paths.h"

namespace cw::data {

Dataset load_svhn(const std::string& data_dir, const std::string& split) {
    if (split != "train" && split != "test" && split != "extra")
        throw DataError("svhn: unknown split '" + split + "' (expected train, test or extra)");
    PathSearch search("svhn", {join_path(data_dir, "svhn"), join_path(data_dir, "SVHN"), data_dir});
    const std::string name = split + "_32x32.mat";
    const std::string path = search.find_file({name});
    if (path.empty()) search.fail_missing(name);

    MatFile mat;
    {
        const std::vector<uint8_t> bytes = read_file(path);
        mat = parse_mat(bytes.data(), bytes.size(), path);
    }  // the file buffer goes; compressed variables keep only their inflated data
    const MatVariable* x = mat.find("X");
    const MatVariable* y = mat.find("y");
    if (!x || !y) fail(path, "expected numeric variables 'X' and 'y' (SVHN format 2)");
    if (x->dims.size() != 4 || x->dims[0] != 32 || x->dims[1] != 32 || x->dims[2] != 3) {
        std::string dims;
        for (auto v : x->dims) dims += (dims.empty() ? "" : ", ") + std::to_string(v);
        fail(path, "X has dims [" + dims + "], expected [32, 32, 3, N] (32x32 RGB images)");
    }
    const int64_t n = x->dims[3];
    if (y->numel() != n || y->dims.size() != 2 || (y->dims[0] != n && y->dims[1] != n))
        fail(path, "y must hold one label per image (" + std::to_string(n) + "), it has " +
                       std::to_string(y->numel()));

    Dataset d;
    d.name = "svhn/" + split;
    d.source = path;
    d.channels = 3;
    d.height = d.width = 32;
    d.class_names = digit_class_names();
    d.labels.resize(n);
    const std::vector<int64_t> raw_labels = mat_to_int64(*y, path);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t v = raw_labels[i];
        if (v < 1 || v > 10)
            fail(path, "label " + std::to_string(v) + " of image " + std::to_string(i) + " out of range [1, 10]");
        d.labels[i] = static_cast<int32_t>(v == 10 ? 0 : v);
    }

    std::vector<uint8_t> converted;
    const uint8_t* src = x->data();
    if (x->data_type != miUINT8) {
        converted = mat_to_uint8(*x, path);
        src = converted.data();
    }
    // Column-major X(r, c, ch, i) sits at r + 32c + 1024ch + 3072i; we store CHW with rows outermost.
    d.pixels.resize(size_t(n) * 3072);
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t* in = src + i * 3072;
        uint8_t* out = d.pixels.data() + i * 3072;
        for (int ch = 0; ch < 3; ++ch)
            for (int c = 0; c < 32; ++c)
                for (int r = 0; r < 32; ++r) out[ch * 1024 + r * 32 + c] = in[ch * 1024 + c * 32 + r];
    }
    d.check();
    return d;
}

}  // namespace cw::data
