#pragma once
// Datasets by name, for command-line tools: --dataset NAME [--split SPLIT] [--data-dir DIR].
//
//   name              splits                                   images        classes
//   mnist             train, test                              1x28x28       10
//   fashion-mnist     train, test                              1x28x28       10
//   cifar10           train, test                              3x32x32       10
//   cifar100          train, test                              3x32x32       100 (fine; coarse kept alongside)
//   cifar100-coarse   train, test                              3x32x32       20 superclasses
//   svhn              train, test, extra                       3x32x32       10
//   gtsrb             train, test (official PPMs, ROI crop)    3x32x32       43
//   gtsrb32           train, train_half, test (ready records)  3x32x32       43
//   tinyimagenet      train, val                               3x64x64       200
//   cifar10c          <corruption>:<severity>, e.g. fog:3      3x32x32       10
//   synthetic         train, test (generated, no files)        3x32x32       10 (datasets/synthetic.h)
#include <string>
#include <vector>

#include "datasets/dataset.h"

namespace cw::data {

struct DatasetInfo {
    std::string name;
    int channels = 0, height = 0, width = 0, num_classes = 0;
    std::vector<std::string> splits;  // cifar10c: "<corruption>:<severity>"
    std::string train_split, test_split;
    std::string description;
};

const std::vector<DatasetInfo>& dataset_catalog();
// Throws DataError listing the known names.
const DatasetInfo& dataset_info(const std::string& name);

// Loads `split` of dataset `name` from the data folder (resolve_data_dir("") when `data_dir` is empty).
Dataset load_dataset(const std::string& name, const std::string& split, const std::string& data_dir = "");

// Class names without loading any data; cifar10c uses CIFAR-10's, tinyimagenet needs its wnids.txt (data_dir).
std::vector<std::string> dataset_class_names(const std::string& name, const std::string& data_dir = "");

}  // namespace cw::data
