#pragma once
// One loader per dataset, reading the official file layout from a data folder (see datasets/README.md for the
// folders each one tries). Every loader returns a complete, checked Dataset or throws DataError — a missing
// dataset's message lists the paths tried and the `make data` command that fetches it.
#include <string>
#include <vector>

#include "datasets/dataset.h"

namespace cw::data {

// MNIST / Fashion-MNIST IDX files, gzipped or not. split: "train" | "test". Fashion-MNIST is also looked up in
// /usr/share/datasets/fashion-mnist (Debian package dataset-fashion-mnist).
Dataset load_mnist(const std::string& data_dir, const std::string& split);
Dataset load_fashion_mnist(const std::string& data_dir, const std::string& split);

// CIFAR-10 binary: data_batch_1..5.bin, test_batch.bin (or test.bin). split: "train" | "test".
Dataset load_cifar10(const std::string& data_dir, const std::string& split);

// CIFAR-100 binary: train.bin / test.bin, 2 label bytes (coarse, fine). Labels are the 100 fine classes;
// coarse_labels hold the 20 superclasses (with_coarse_labels() swaps them in).
Dataset load_cifar100(const std::string& data_dir, const std::string& split);

// SVHN cropped digits: train_32x32.mat / test_32x32.mat / extra_32x32.mat (MAT v5, compressed or not).
// split: "train" | "test" | "extra". Label 10 in the file is digit 0.
Dataset load_svhn(const std::string& data_dir, const std::string& split);

// GTSRB official layout (Final_Training/Images/000NN/*.ppm + GT-000NN.csv, Final_Test/Images + GT-final_test.csv):
// each image is cropped to its ROI (inclusive corners) and resized to size x size. split: "train" | "test".
struct GtsrbOptions {
    int size = 32;
    bool crop_to_roi = true;
};
Dataset load_gtsrb(const std::string& data_dir, const std::string& split, const GtsrbOptions& options = {});

// Our ready-made 32x32 GTSRB record files (gtsrb32/README.txt; whole image resized, no ROI crop).
// split: "train" (train.bin, else the half set train_half.bin), "train_half", "test".
Dataset load_gtsrb32(const std::string& data_dir, const std::string& split);

// TinyImageNet-200: 64x64 JPEGs. split: "train" | "val". Classes are the wnids sorted (torchvision ImageFolder
// order); class names come from words.txt (first synonym) when present, else the wnids.
Dataset load_tiny_imagenet(const std::string& data_dir, const std::string& split);
std::vector<std::string> tiny_imagenet_class_names(const std::string& data_dir);  // reads wnids.txt, words.txt

// CIFAR-10-C: one corruption at one severity (1..5) — the 10000-image slice [(s-1)N/5, sN/5) of
// <corruption>.npy (uint8 NHWC) with labels.npy.
Dataset load_cifar10c(const std::string& data_dir, const std::string& corruption, int severity);
const std::vector<std::string>& cifar10c_corruptions();  // the 19 file names shipped (15 benchmark + 4 extra)
// The <corruption>.npy load_cifar10c would read (data_dir as given, not resolved), or "" when it or the labels.npy
// beside it is missing: lets an evaluation choose the official files without catching a loader error.
std::string cifar10c_file(const std::string& data_dir, const std::string& corruption);

}  // namespace cw::data
