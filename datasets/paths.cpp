#include "datasets/paths.h"

#include <cstdlib>

#include "util/split_list.h"
#include "datasets/error.h"
#include "datasets/file_io.h"

namespace cw::data {

std::string resolve_data_dir(const std::string& flag_value) {
    if (!flag_value.empty()) return flag_value;
    if (const char* env = std::getenv("CLASSWISE_DATA"); env && *env) return env;
    return "./data";
}

std::string PathSearch::find_file(const std::vector<std::string>& names) {
    for (const auto& folder : folders_)
        for (const auto& name : names) {
            const std::string path = join_path(folder, name);
            if (file_exists(path)) return path;
            tried_.push_back(path);
        }
    return "";
}

std::string PathSearch::find_folder_with(const std::string& probe) {
    for (const auto& folder : folders_) {
        const std::string path = join_path(folder, probe);
        if (file_exists(path)) return folder;
        tried_.push_back(path);
    }
    return "";
}

void PathSearch::fail_missing(const std::string& what) const {
    throw DataError(dataset_ + ": " + what + " not found (tried: " + util::join_list(tried_) + "). " + how_to_get(dataset_) +
                    "; or point --data-dir / CLASSWISE_DATA at the folder that holds it.");
}

std::string how_to_get(const std::string& dataset) {
    if (dataset == "gtsrb32")
        return "gtsrb32 is a pre-resized GTSRB copy with no public download: put its train.bin and test.bin "
               "(format in datasets/README.md) in <data-dir>/gtsrb32, or use --dataset gtsrb, the official images "
               "resized on load (get them with: make data DATASET=gtsrb)";
    std::string make_name = dataset;
    if (dataset == "cifar100-coarse") make_name = "cifar100";
    std::string s = "Get it with: make data DATASET=" + make_name;
    if (dataset == "fashion-mnist") s += " (or apt-get install dataset-fashion-mnist)";
    return s;
}

}  // namespace cw::data
