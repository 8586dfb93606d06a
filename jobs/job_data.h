#pragma once
// The images a job trains, validates and is evaluated on, from its data flags: the validation split, a
// class-proportional training subset, the classes kept (--classes top:K), a --train-file set, and batches for the
// evaluator.
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "datasets/splits.h"
#include "engine/device.h"
#include "eval/evaluator.h"

namespace cw::train {

struct DataConfig {
    std::string dataset = "fashion-mnist";
    // Validation split taken from the training split, per class: none; first:K (CFA / FAIR-TAT: the first K of each
    // class, K = 100 on CIFAR-10); last:K (FRL / WAT: the last K, 300 on CIFAR-10); fraction:F (⌊F·n_c⌋ from the
    // start of each class, CFA's 2%).
    std::string val_split = "none";
    int64_t train_n = 0;          // train on N images, taken class-proportionally in dataset order (0: all)
    // Classes kept: all, or top:K — the K classes with the most training images, relabelled 0..K-1 in that order
    // (FRL's 17 GTSRB classes, docs/protocols/frl.md §5).
    std::string classes = "all";
    // Train on these images instead of the dataset's training split (a safetensors file: "images" F32 [N,C,H,W]
    // in [0,1], "labels" I32 [N]; e.g. Ilyas et al.'s robust / non-robust feature sets, protocols/feature_datasets.h).
    // Shape and classes must be the dataset's; the test split still comes from `dataset`. Empty: off.
    std::string train_file;
    int64_t eval_n = 0;           // evaluate on the first N test images (0: all)
    int64_t epoch_eval_n = 0;     // the per-epoch evaluation uses the first N of those (0: all eval_n)
    int64_t batch_size = 128;
    int64_t eval_batch_size = 256;
    std::string augment = "default";   // default (the dataset's: crop+flip for CIFAR, none for MNIST/GTSRB), none, crop, flip, crop+flip
    std::string pad_mode = "reflect";  // crop padding: reflect (Rice / CFA / FAIR-TAT) or zeros (TRADES / FRL / WAT / FAT)
    std::string normalize = "dataset"; // dataset (CIFAR mean/std inside the model, docs/protocols/training.md §1.3) or none
};

// What a job's data flags resolve to: the two splits (classes kept, --train-file applied), the validation split
// and the training subset as indices into `train`, the test images evaluated (the first --eval-n), and the
// superclass of each class for CIFAR-100's coarse evaluation (empty for other datasets).
struct JobImages {
    std::shared_ptr<data::Dataset> train;
    std::shared_ptr<data::Dataset> test;
    data::Split split;
    std::vector<int64_t> train_idx;
    std::vector<int64_t> test_idx;
    std::vector<int32_t> coarse_of;
};

// Loads `data`'s dataset from `data_dir` and applies its flags in the order a job needs them, saying on `out`
// what it kept. Throws one line naming the flag or file on a bad rule, before any training starts.
JobImages load_job_images(const DataConfig& data, const std::string& data_dir, std::ostream& out);

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
