#pragma once
// Where datasets live. The data folder is the --data-dir value if given, else $CLASSWISE_DATA, else ./data; each
// loader then tries a few conventional sub-folders, and a missing dataset is reported with every path tried and
// the command that fetches it.
#include <string>
#include <vector>

namespace cw::data {

std::string resolve_data_dir(const std::string& flag_value);

// Debian's dataset-fashion-mnist package installs the IDX files here; it needs no download.
inline const char* system_fashion_mnist_dir() { return "/usr/share/datasets/fashion-mnist"; }

// Records the paths a lookup tried so the error can list them.
class PathSearch {
public:
    PathSearch(std::string dataset, std::vector<std::string> folders)
        : dataset_(std::move(dataset)), folders_(std::move(folders)) {}

    // The first folder/name (for each name in order) that is a regular file, or "" (and the tries are recorded).
    std::string find_file(const std::vector<std::string>& names);
    // The first folder whose `probe` file exists, or "".
    std::string find_folder_with(const std::string& probe);
    // Throws DataError: "<dataset>: <what> not found (tried: ...). Get it with: make data DATASET=..."
    [[noreturn]] void fail_missing(const std::string& what) const;

    const std::vector<std::string>& folders() const { return folders_; }

private:
    std::string dataset_;
    std::vector<std::string> folders_;
    std::vector<std::string> tried_;
};

// What a user can do to get a dataset: the `make data` command (gtsrb32 has none: it says where its files go and
// that --dataset gtsrb is the downloadable equivalent).
std::string how_to_get(const std::string& dataset);

}  // namespace cw::data
