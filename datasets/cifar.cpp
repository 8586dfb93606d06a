// CIFAR-10, CIFAR-100 and our GTSRB-32 files: all in the CIFAR binary record layout.
#include <algorithm>

#include "util/split_list.h"
#include "datasets/cifar_records.h"
#include "datasets/class_names.h"
#include "datasets/error.h"
#include "datasets/file_io.h"
#include "datasets/loaders.h"
#include "datasets/paths.h"

namespace cw::data {

namespace {

void check_split(const std::string& dataset, const std::string& split, const std::vector<std::string>& allowed) {
    if (std::find(allowed.begin(), allowed.end(), split) != allowed.end()) return;
    throw DataError(dataset + ": unknown split '" + split + "' (expected " + util::join_list(allowed) + ")");
}

Dataset empty_rgb32(const std::string& name, const std::string& source, const std::vector<std::string>& classes) {
    Dataset d;
    d.name = name;
    d.source = source;
    d.channels = 3;
    d.height = d.width = 32;
    d.class_names = classes;
    return d;
}

// Appends every record of the files, in order. `main_label` picks the label byte that becomes Dataset::labels,
// `coarse_label` (if >= 0) the one that becomes coarse_labels.
void append_files(Dataset& d, const std::vector<std::string>& paths, const RecordLayout& layout, size_t main_label,
                  int coarse_label = -1) {
    for (const auto& path : paths) {
        const std::vector<uint8_t> bytes = read_file(path);
        Records r = parse_records(bytes.data(), bytes.size(), path, layout);
        d.pixels.insert(d.pixels.end(), r.pixels.begin(), r.pixels.end());
        d.labels.insert(d.labels.end(), r.labels[main_label].begin(), r.labels[main_label].end());
        if (coarse_label >= 0)
            d.coarse_labels.insert(d.coarse_labels.end(), r.labels[coarse_label].begin(), r.labels[coarse_label].end());
    }
}

}  // namespace

Dataset load_cifar10(const std::string& data_dir, const std::string& split) {
    check_split("cifar10", split, {"train", "test"});
    PathSearch search("cifar10", {join_path(data_dir, "cifar-10-batches-bin"),
                                  join_path(data_dir, "cifar10/cifar-10-batches-bin"), join_path(data_dir, "cifar10")});
    std::vector<std::string> files;
    if (split == "train") {
        const std::string folder = search.find_folder_with("data_batch_1.bin");
        if (folder.empty()) search.fail_missing("data_batch_1.bin");
        for (int b = 1; b <= 5; ++b) {
            PathSearch in_folder("cifar10", {folder});
            const std::string name = "data_batch_" + std::to_string(b) + ".bin";
            const std::string path = in_folder.find_file({name});
            if (path.empty()) in_folder.fail_missing(name + " (all five training batches are needed)");
            files.push_back(path);
        }
    } else {
        const std::string path = search.find_file({"test_batch.bin", "test.bin"});
        if (path.empty()) search.fail_missing("test_batch.bin (or test.bin)");
        files.push_back(path);
    }
    Dataset d = empty_rgb32("cifar10/" + split, files.front().substr(0, files.front().find_last_of('/')),
                            cifar10_class_names());
    append_files(d, files, RecordLayout{{10}}, 0);
    d.check();
    return d;
}

Dataset load_cifar100(const std::string& data_dir, const std::string& split) {
    check_split("cifar100", split, {"train", "test"});
    PathSearch search("cifar100", {join_path(data_dir, "cifar-100-binary"),
                                   join_path(data_dir, "cifar100/cifar-100-binary"), join_path(data_dir, "cifar100")});
    const std::string path = search.find_file({split + ".bin"});
    if (path.empty()) search.fail_missing(split + ".bin");
    Dataset d = empty_rgb32("cifar100/" + split, path, cifar100_fine_class_names());
    d.coarse_class_names = cifar100_coarse_class_names();
    // Each record: coarse label byte, fine label byte, image.
    append_files(d, {path}, RecordLayout{{20, 100}}, 1, 0);
    d.check();
    return d;
}

Dataset load_gtsrb32(const std::string& data_dir, const std::string& split) {
    check_split("gtsrb32", split, {"train", "train_half", "test"});
    PathSearch search("gtsrb32", {join_path(data_dir, "gtsrb32")});
    std::vector<std::string> names;
    if (split == "train") names = {"train.bin", "train_half.bin"};
    else names = {split + ".bin"};
    const std::string path = search.find_file(names);
    if (path.empty()) search.fail_missing(names.front());
    const std::string file = path.substr(path.find_last_of('/') + 1);
    Dataset d = empty_rgb32("gtsrb32/" + file.substr(0, file.size() - 4), path, gtsrb_class_names());
    append_files(d, {path}, RecordLayout{{43}}, 0);
    d.check();
    return d;
}

}  // namespace cw::data
