#pragma once
// An image classification set held in memory as uint8, one CHW image after another (a quarter of the float
// size, so even TinyImageNet fits). Conversion to float [0,1] happens per batch; normalisation belongs to the model.
#include <cstdint>
#include <string>
#include <vector>

namespace cw::data {

struct Dataset {
    std::string name;    // "cifar10/train"
    std::string source;  // the file or folder it was read from, for messages and run records
    int channels = 0, height = 0, width = 0;
    std::vector<uint8_t> pixels;  // size() * image_bytes(); image i is CHW at i * image_bytes()
    std::vector<int32_t> labels;  // in [0, num_classes())
    std::vector<std::string> class_names;
    // A second, coarser labelling of the same images (CIFAR-100's 20 superclasses); empty for other sets.
    std::vector<int32_t> coarse_labels;
    std::vector<std::string> coarse_class_names;

    int64_t size() const { return static_cast<int64_t>(labels.size()); }
    int num_classes() const { return static_cast<int>(class_names.size()); }
    int64_t image_bytes() const { return int64_t(channels) * height * width; }
    const uint8_t* image(int64_t i) const { return pixels.data() + i * image_bytes(); }
    uint8_t* image(int64_t i) { return pixels.data() + i * image_bytes(); }

    std::vector<int64_t> class_counts() const;  // images per class, length num_classes()
    // Throws DataError unless sizes agree and every label is in range; loaders call it before returning, so a
    // half-built set never escapes.
    void check() const;
};

// The same images labelled by their superclass (coarse_labels become labels); throws if the set has none.
Dataset with_coarse_labels(Dataset d);

// Each class's superclass, read off the (label, coarse label) pairs: result[k] is the coarse index of class k.
// Empty for a set without coarse labels. Throws DataError if two images of one class name different superclasses,
// or if a class has no image (its superclass is then unknown).
std::vector<int32_t> coarse_of_fine(const Dataset& d);

// Copies the images of `classes` (in that order) into a new set whose labels are 0..classes.size()-1, keeping
// dataset order. `original_index`, if given, receives the source index of every kept image.
Dataset select_classes(const Dataset& d, const std::vector<int>& classes,
                       std::vector<int64_t>* original_index = nullptr);

// Copies the given images (in the given order) into a new set with the same classes.
Dataset take(const Dataset& d, const std::vector<int64_t>& indices);

}  // namespace cw::data
