#pragma once
// Human-readable class names, in label order, for every dataset we load (reports name classes, not numbers).
#include <string>
#include <vector>

namespace cw::data {

const std::vector<std::string>& digit_class_names();           // "0".."9": MNIST and SVHN (SVHN label 10 = digit 0)
const std::vector<std::string>& fashion_mnist_class_names();
const std::vector<std::string>& cifar10_class_names();
const std::vector<std::string>& cifar100_fine_class_names();   // 100, official label order
const std::vector<std::string>& cifar100_coarse_class_names(); // 20 superclasses
const std::vector<std::string>& gtsrb_class_names();           // 43 sign names, ClassId order

}  // namespace cw::data
