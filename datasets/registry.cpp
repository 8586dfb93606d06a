#include "datasets/registry.h"

#include <algorithm>

#include "datasets/class_names.h"
#include "datasets/error.h"
#include "datasets/loaders.h"
#include "datasets/paths.h"
#include "datasets/synthetic.h"

namespace cw::data {

const std::vector<DatasetInfo>& dataset_catalog() {
    static const std::vector<DatasetInfo> catalog{
        {"mnist", 1, 28, 28, 10, {"train", "test"}, "train", "test", "MNIST handwritten digits (IDX)"},
        {"fashion-mnist", 1, 28, 28, 10, {"train", "test"}, "train", "test", "Fashion-MNIST (IDX)"},
        {"cifar10", 3, 32, 32, 10, {"train", "test"}, "train", "test", "CIFAR-10 (binary version)"},
        {"cifar100", 3, 32, 32, 100, {"train", "test"}, "train", "test", "CIFAR-100, 100 fine classes (binary)"},
        {"cifar100-coarse", 3, 32, 32, 20, {"train", "test"}, "train", "test", "CIFAR-100, 20 superclasses"},
        {"svhn", 3, 32, 32, 10, {"train", "test", "extra"}, "train", "test", "SVHN cropped digits (.mat)"},
        {"gtsrb", 3, 32, 32, 43, {"train", "test"}, "train", "test", "GTSRB official PPMs, ROI crop, 32x32"},
        {"gtsrb32", 3, 32, 32, 43, {"train", "train_half", "test"}, "train", "test",
         "GTSRB 32x32 record files (shared data; train falls back to train_half)"},
        {"tinyimagenet", 3, 64, 64, 200, {"train", "val"}, "train", "val", "TinyImageNet-200 (JPEG)"},
        {"cifar10c", 3, 32, 32, 10, {"<corruption>:<severity>"}, "", "gaussian_noise:5",
         "CIFAR-10-C, one corruption at one severity (.npy)"},
        {"synthetic", 3, 32, 32, 10, {"train", "test"}, "train", "test",
         "generated coloured shapes, 2000/500 images, classes of unequal difficulty (tests; no files)"},
    };
    return catalog;
}

const DatasetInfo& dataset_info(const std::string& name) {
    for (const auto& info : dataset_catalog())
        if (info.name == name) return info;
    std::string names;
    for (const auto& info : dataset_catalog()) names += (names.empty() ? "" : ", ") + info.name;
    throw DataError("unknown dataset '" + name + "' (known: " + names + ")");
}

namespace {
Dataset load_cifar10c_split(const std::string& dir, const std::string& split) {
    const size_t colon = split.rfind(':');
    int severity = 0;
    if (colon != std::string::npos && colon + 2 == split.size() && split[colon + 1] >= '1' && split[colon + 1] <= '5')
        severity = split[colon + 1] - '0';
    if (!severity)
        throw DataError("cifar10c: split '" + split +
                        "' should be <corruption>:<severity> with severity 1..5, e.g. gaussian_noise:5");
    return load_cifar10c(dir, split.substr(0, colon), severity);
}
}  // namespace

Dataset load_dataset(const std::string& name, const std::string& split, const std::string& data_dir) {
    const DatasetInfo& info = dataset_info(name);
    const std::string dir = resolve_data_dir(data_dir);
    Dataset d;
    if (name == "synthetic") d = load_synthetic(split);
    else if (name == "mnist") d = load_mnist(dir, split);
    else if (name == "fashion-mnist") d = load_fashion_mnist(dir, split);
    else if (name == "cifar10") d = load_cifar10(dir, split);
    else if (name == "cifar100") d = load_cifar100(dir, split);
    else if (name == "cifar100-coarse") d = with_coarse_labels(load_cifar100(dir, split));
    else if (name == "svhn") d = load_svhn(dir, split);
    else if (name == "gtsrb") d = load_gtsrb(dir, split);
    else if (name == "gtsrb32") d = load_gtsrb32(dir, split);
    else if (name == "tinyimagenet") d = load_tiny_imagenet(dir, split);
    else d = load_cifar10c_split(dir, split);
    if (d.channels != info.channels || d.height != info.height || d.width != info.width)
        throw DataError(d.source + ": images are " + std::to_string(d.channels) + "x" + std::to_string(d.height) +
                        "x" + std::to_string(d.width) + ", " + name + " should have " + std::to_string(info.channels) +
                        "x" + std::to_string(info.height) + "x" + std::to_string(info.width));
    return d;
}

std::vector<std::string> dataset_class_names(const std::string& name, const std::string& data_dir) {
    dataset_info(name);  // validates the name
    if (name == "mnist" || name == "svhn") return digit_class_names();
    if (name == "fashion-mnist") return fashion_mnist_class_names();
    if (name == "cifar10" || name == "cifar10c") return cifar10_class_names();
    if (name == "cifar100") return cifar100_fine_class_names();
    if (name == "cifar100-coarse") return cifar100_coarse_class_names();
    if (name == "gtsrb" || name == "gtsrb32") return gtsrb_class_names();
    if (name == "synthetic") return synthetic_class_names();
    return tiny_imagenet_class_names(resolve_data_dir(data_dir));
}

}  // namespace cw::data
