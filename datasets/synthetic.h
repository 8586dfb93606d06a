#pragma once
// `synthetic`: a generated 10-class set of 3x32x32 images that needs no files, for tests and smoke runs of the
// experiment binaries. Each class is a coloured shape (disc, bars, cross, ...) at a jittered position and size on
// a grey background with pixel noise. The classes are deliberately unequal, so per-class accuracy differs as it
// does on real data:
//   easy       distinct shape and colour, little noise
//   medium     4 "orange ring" and 7 "orange frame": one colour, similar outlines
//   low-contrast 2 "grey triangle": nearly the background's colour, noisy
//   overlapping 3 "brown square" and 5 "brown disc": one colour, small, noisy, and a fifth of each class is drawn
//              with the other's shape (no classifier can tell those apart)
// Labels cycle 0..9 in dataset order, so every prefix is balanced. Image i of a split depends only on (split, i):
// the set is the same on every machine and run.
#include <string>

#include "datasets/dataset.h"

namespace cw::data {

constexpr int64_t kSyntheticTrainSize = 2000;
constexpr int64_t kSyntheticTestSize = 500;

// split: "train" (2000 images) or "test" (500); throws DataError naming the split otherwise.
Dataset load_synthetic(const std::string& split);

std::vector<std::string> synthetic_class_names();

}  // namespace cw::data
