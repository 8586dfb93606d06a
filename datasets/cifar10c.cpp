// CIFAR-10-C: <corruption>.npy holds uint8 [5N, 32, 32, 3] (NHWC), severities 1..5 stacked in blocks of N
// (N = 10000, the CIFAR-10 test set); labels.npy holds the matching 5N labels. Only the requested block is read.
#include <algorithm>

#include "util/split_list.h"
#include "datasets/class_names.h"
#include "datasets/error.h"
#include "datasets/file_io.h"
#include "datasets/loaders.h"
#include "datasets/npy.h"
#include "datasets/paths.h"

namespace cw::data {

const std::vector<std::string>& cifar10c_corruptions() {
    static const std::vector<std::string> names{
        "gaussian_noise", "shot_noise",  "impulse_noise", "defocus_blur", "glass_blur",
        "motion_blur",    "zoom_blur",   "snow",          "frost",        "fog",
        "brightness",     "contrast",    "elastic_transform", "pixelate", "jpeg_compression",
        "speckle_noise",  "gaussian_blur", "spatter",     "saturate"};
    return names;
}

namespace {

PathSearch cifar10c_search(const std::string& data_dir) {
    return PathSearch("cifar10c", {join_path(data_dir, "CIFAR-10-C"), join_path(data_dir, "cifar10c/CIFAR-10-C"),
                                   join_path(data_dir, "cifar10c")});
}

NpyHeader read_npy_header(const std::string& path) {
    const uint64_t size = file_size(path);
    // A header is a few hundred bytes; 64 KiB covers any header NumPy writes for these arrays.
    const std::vector<uint8_t> head = read_file_range(path, 0, std::min<uint64_t>(size, 65536));
    NpyHeader h = parse_npy_header(head.data(), head.size(), path);
    const uint64_t want = npy_expected_file_size(h);
    if (want != size)
        fail(path, std::string(want > size ? "truncated" : "has trailing bytes") + ": header promises " +
                       std::to_string(want) + " bytes, file has " + std::to_string(size));
    if (h.fortran_order) fail(path, "Fortran-ordered arrays are not supported");
    return h;
}

}  // namespace

std::string cifar10c_file(const std::string& data_dir, const std::string& corruption) {
    PathSearch search = cifar10c_search(data_dir);
    const std::string images = search.find_file({corruption + ".npy"});
    if (images.empty()) return "";
    PathSearch labels("cifar10c", {images.substr(0, images.find_last_of('/'))});
    return labels.find_file({"labels.npy"}).empty() ? "" : images;
}

Dataset load_cifar10c(const std::string& data_dir, const std::string& corruption, int severity) {
    const auto& known = cifar10c_corruptions();
    if (std::find(known.begin(), known.end(), corruption) == known.end()) {
        throw DataError("cifar10c: unknown corruption '" + corruption + "' (expected one of " + util::join_list(known) +
                        ")");
    }
    if (severity < 1 || severity > 5)
        throw DataError("cifar10c: severity " + std::to_string(severity) + " out of range (expected 1 to 5)");
    PathSearch search = cifar10c_search(data_dir);
    const std::string images_path = search.find_file({corruption + ".npy"});
    if (images_path.empty()) search.fail_missing(corruption + ".npy");
    const std::string folder = images_path.substr(0, images_path.find_last_of('/'));
    PathSearch label_search("cifar10c", {folder});
    const std::string labels_path = label_search.find_file({"labels.npy"});
    if (labels_path.empty()) label_search.fail_missing("labels.npy next to " + corruption + ".npy");

    const NpyHeader ih = read_npy_header(images_path);
    if (ih.kind != 'u' || ih.item_size != 1 || ih.shape.size() != 4 || ih.shape[1] != 32 || ih.shape[2] != 32 ||
        ih.shape[3] != 3)
        fail(images_path, "expected uint8 images of shape [5N, 32, 32, 3], got dtype '" + ih.descr + "' rank " +
                              std::to_string(ih.shape.size()));
    if (ih.shape[0] == 0 || ih.shape[0] % 5 != 0)
        fail(images_path, std::to_string(ih.shape[0]) + " images is not 5 severities of equal size");
    const int64_t n = ih.shape[0] / 5;

    const std::vector<uint8_t> label_file = read_file(labels_path);
    const NpyArray labels = parse_npy(label_file.data(), label_file.size(), labels_path);
    if (labels.header.shape.size() != 1 || labels.header.shape[0] != ih.shape[0])
        fail(labels_path, "expected " + std::to_string(ih.shape[0]) + " labels, one per image of " + images_path);
    const std::vector<int64_t> all_labels =
        npy_to_int64(labels.header, labels.data.data() + (severity - 1) * n * labels.header.item_size, n, labels_path);

    const std::vector<uint8_t> nhwc = read_file_range(images_path, ih.data_offset + (severity - 1) * n * 3072, n * 3072);

    Dataset d;
    d.name = "cifar10c/" + corruption + "/" + std::to_string(severity);
    d.source = images_path;
    d.channels = 3;
    d.height = d.width = 32;
    d.class_names = cifar10_class_names();
    d.labels.resize(n);
    for (int64_t i = 0; i < n; ++i) {
        if (all_labels[i] < 0 || all_labels[i] >= 10)
            fail(labels_path, "label " + std::to_string(all_labels[i]) + " of image " +
                                  std::to_string((severity - 1) * n + i) + " out of range [0, 10)");
        d.labels[i] = static_cast<int32_t>(all_labels[i]);
    }
    d.pixels.resize(n * 3072);
    for (int64_t i = 0; i < n; ++i)
        for (int p = 0; p < 1024; ++p)
            for (int c = 0; c < 3; ++c) d.pixels[i * 3072 + c * 1024 + p] = nhwc[i * 3072 + p * 3 + c];
    d.check();
    return d;
}

}  // namespace cw::data
