#pragma once
// The images a job trains, validates and is evaluated on, from its data flags: the validation split, a
// class-proportional training subset, the classes kept (--classes top:K), a --train-file set, and batches for the
// evaluator.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "datasets/splits.h"
#include "engine/device.h"
#include "eval/evaluator.h"

namespace cw::train {

// The --val-split rule (none, first:K, last:K, fraction:F) applied per class to the training set; throws one line
// naming the flag on a malformed rule or one the classes cannot hold.
data::Split make_split(const data::Dataset& train, const std::string& rule_text);

// n of `indices`, each class in proportion to its share of them, the first ones in dataset order (GTSRB's training
// files are sorted by class: a plain prefix would hold a few classes only). n <= 0 or beyond the count: all.
std::vector<int64_t> proportional_subset(const std::vector<int64_t>& indices, const data::Dataset& d, int64_t n);

// `indices` of `d` as the evaluator's batches of `batch_size` on `device`.
eval::BatchSource batches_of(std::shared_ptr<const data::Dataset> d, std::vector<int64_t> indices, int64_t batch_size,
                             Device device);

// The --classes rule: "all" → 0 (every class); "top:K" → K; throws naming `flag` otherwise (K < 2 or above the
// class count, or not a whole number).
int classes_kept(const std::string& flag, const std::string& rule, int num_classes);

// `d` (any split of `dataset`) restricted to the classes a job trained on with --classes `rule`, relabelled as the
// job relabels them: the K classes with the most images in the training split, in that order. "all" leaves `d` as
// it is. Loads the training split's labels from `data_dir` to rank the classes; throws naming `flag` on a bad rule.
void keep_job_classes(const std::string& flag, const std::string& rule, const std::string& dataset,
                      const std::string& data_dir, data::Dataset& d);

// The --train-file images as a training set shaped like `like` (its classes, channels and size): pixels rounded to
// the nearest of 256 levels, as every training set is held (datasets/dataset.h). Throws one line naming the file
// on a missing tensor, a wrong dtype or shape, a label out of range or a pixel outside [0,1].
data::Dataset read_train_file(const std::string& path, const data::Dataset& like);

}  // namespace cw::train
