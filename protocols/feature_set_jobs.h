#pragma once
// benz_features' feature datasets (protocols/feature_datasets.h) as study jobs (study/work.h), so the construction
// is listed, locked, refused and chained like the training it sits between: a construction job needs the job of its
// source model (its last.safetensors) — or reads a given checkpoint and needs nothing — and the natural training
// on the set needs the construction job (Arm::use_inputs points its --train-file at the job's set). Each job
// writes into its folder
//   set.safetensors       the images and labels (train --train-file reads it)
//   construction.json     written last (the job has finished when it exists): images, steps, step size, the source
//                         and the mean feature losses at the start and the end
// The set's training images are the first ⌈n / C⌉ of every class (all of them for n = 0), in dataset order.
#include <cstdint>
#include <memory>
#include <string>

#include "datasets/dataset.h"
#include "engine/device.h"
#include "nn/models/classifier.h"
#include "protocols/feature_datasets.h"
#include "study/work.h"

namespace cw::protocols {

struct FeatureSetSpec {
    std::string dataset;                 // the training split the images come from
    int64_t images = 0;                  // --feature-n (0: the whole training split)
    FeatureSetOptions options;           // steps, step size, batch size; seed, resume, source and log come per job
};

// The reference set: the chosen training images unchanged.
study::Work original_set_work(const FeatureSetSpec& spec);

// D_R or D_NR from a source model: the last.safetensors of the job of `source_arm` (one of its inputs), or the
// checkpoint `weights` when given (`flag` names it in errors).
study::Work feature_set_work(const FeatureSetSpec& spec, const std::string& source_arm, const std::string& weights,
                             const std::string& flag);

// <job dir>/set.safetensors.
std::string set_file(const std::string& job_dir);

// A source checkpoint, checked against the training images before the first forward (a mismatch would otherwise
// surface deep inside an op); one line naming `flag` and the file on a bad one.
std::shared_ptr<nn::Classifier> source_model(const std::string& flag, const std::string& file, const data::Dataset& train,
                                             Device device);

}  // namespace cw::protocols
