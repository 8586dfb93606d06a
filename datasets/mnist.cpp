// MNIST and Fashion-MNIST: the same IDX layout, different folders and class names.
#include <algorithm>

#include "datasets/class_names.h"
#include "datasets/error.h"
#include "datasets/file_io.h"
#include "datasets/idx.h"
#include "datasets/loaders.h"
#include "datasets/paths.h"

namespace cw::data {

namespace {

std::vector<std::string> idx_names(const std::string& prefix, const std::string& kind, int rank) {
    // Official names, plus the dotted form some mirrors use ("train-images.idx3-ubyte").
    const std::string base = prefix + "-" + kind + "-idx" + std::to_string(rank) + "-ubyte";
    return {base + ".gz", base, prefix + "-" + kind + ".idx" + std::to_string(rank) + "-ubyte"};
}

Dataset load_idx_dataset(const std::string& dataset, std::vector<std::string> folders, const std::string& split,
                         const std::vector<std::string>& class_names) {
    if (split != "train" && split != "test")
        throw DataError(dataset + ": unknown split '" + split + "' (expected train or test)");
    const std::string prefix = split == "train" ? "train" : "t10k";
    PathSearch search(dataset, folders);
    const std::string images_path = search.find_file(idx_names(prefix, "images", 3));
    if (images_path.empty()) search.fail_missing(prefix + "-images-idx3-ubyte[.gz]");
    const std::string folder = images_path.substr(0, images_path.find_last_of('/'));
    PathSearch label_search(dataset, {folder});
    const std::string labels_path = label_search.find_file(idx_names(prefix, "labels", 1));
    if (labels_path.empty()) label_search.fail_missing(prefix + "-labels-idx1-ubyte[.gz] next to the images");

    const std::vector<uint8_t> image_bytes = read_file_maybe_gzip(images_path);
    IdxArray images = parse_idx(image_bytes.data(), image_bytes.size(), images_path);
    const std::vector<uint8_t> label_bytes = read_file_maybe_gzip(labels_path);
    IdxArray labels = parse_idx(label_bytes.data(), label_bytes.size(), labels_path);
    if (images.dims.size() != 3 || images.dims[1] != 28 || images.dims[2] != 28)
        fail(images_path, "expected images of shape [N, 28, 28], got rank " + std::to_string(images.dims.size()) +
                              (images.dims.size() == 3 ? " with " + std::to_string(images.dims[1]) + "x" +
                                                             std::to_string(images.dims[2]) + " images"
                                                       : ""));
    if (labels.dims.size() != 1) fail(labels_path, "expected a rank-1 label file");
    if (labels.dims[0] != images.dims[0])
        fail(labels_path, std::to_string(labels.dims[0]) + " labels for " + std::to_string(images.dims[0]) +
                              " images in " + images_path);

    Dataset d;
    d.name = dataset + "/" + split;
    d.source = folder;
    d.channels = 1;
    d.height = d.width = 28;
    d.class_names = class_names;
    d.pixels = std::move(images.values);
    d.labels.resize(labels.values.size());
    for (size_t i = 0; i < labels.values.size(); ++i) {
        if (labels.values[i] >= class_names.size())
            fail(labels_path, "label " + std::to_string(labels.values[i]) + " of image " + std::to_string(i) +
                                  " out of range [0, " + std::to_string(class_names.size()) + ")");
        d.labels[i] = labels.values[i];
    }
    d.check();
    return d;
}

}  // namespace

Dataset load_mnist(const std::string& data_dir, const std::string& split) {
    return load_idx_dataset("mnist", {join_path(data_dir, "mnist"), join_path(data_dir, "MNIST/raw"), data_dir},
                            split, digit_class_names());
}

Dataset load_fashion_mnist(const std::string& data_dir, const std::string& split) {
    return load_idx_dataset("fashion-mnist",
                            {join_path(data_dir, "fashion-mnist"), join_path(data_dir, "FashionMNIST/raw"),
                             system_fashion_mnist_dir()},
                            split, fashion_mnist_class_names());
}

}  // namespace cw::data
