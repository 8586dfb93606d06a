// train --train-file (jobs/job.h): a safetensors file of images and labels replaces the dataset's training split
// (benz_features trains on Ilyas et al.'s feature sets that way); the test split stays the dataset's. Checked
// against the dataset's shape and classes, one line naming the file otherwise.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "datasets/registry.h"
#include "util/atomic_file.h"
#include "nn/safetensors.h"
#include "tests/test_nn_util.h"
#include "jobs/job.h"

using namespace cw;
using cw_nn_test::ScratchDir;

namespace {

// n images of 3x32x32 (the synthetic set's shape), pixel value `value`, every label `label`.
void write_set(const std::string& path, int64_t n, float value, int32_t label, std::vector<int64_t> shape = {3, 32, 32}) {
    int64_t per = 1;
    for (int64_t d : shape) per *= d;
    shape.insert(shape.begin(), n);
    st::File f;
    f.tensors["images"] = st::from_f32(std::vector<float>(static_cast<size_t>(n * per), value), shape);
    f.tensors["labels"] = st::from_i32(std::vector<int32_t>(static_cast<size_t>(n), label), {n});
    st::write_file(path, f);
}

std::string error_of(const std::string& path, const data::Dataset& like) {
    try {
        train::read_train_file(path, like);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("train file: read as a training set shaped like the dataset", "[benz_features]") {
    ScratchDir dir;
    const data::Dataset like = data::load_dataset("synthetic", "test");
    write_set(dir.file("a.safetensors"), 5, 0.5f, 4);
    const data::Dataset d = train::read_train_file(dir.file("a.safetensors"), like);
    CHECK(d.size() == 5);
    CHECK(d.class_names == like.class_names);
    CHECK(d.labels == std::vector<int32_t>(5, 4));
    CHECK(d.pixels.size() == 5u * 3 * 32 * 32);
    CHECK(int(d.pixels[17]) == 128);   // 0.5 · 255 = 127.5, rounded to the nearest level
    CHECK(d.source == dir.file("a.safetensors"));

    write_set(dir.file("shape.safetensors"), 5, 0.5f, 4, {1, 28, 28});
    const std::string shape = error_of(dir.file("shape.safetensors"), like);
    CHECK_THAT(shape, Catch::StartsWith("--train-file " + dir.file("shape.safetensors") + ": "));
    CHECK_THAT(shape, Catch::Contains("[N,3x32x32]") && Catch::Contains("[5x1x28x28]"));
    write_set(dir.file("label.safetensors"), 5, 0.5f, 10);
    CHECK_THAT(error_of(dir.file("label.safetensors"), like), Catch::Contains("label 10 of image 0 is outside 0..9"));
    write_set(dir.file("pixel.safetensors"), 5, 1.5f, 1);
    CHECK_THAT(error_of(dir.file("pixel.safetensors"), like), Catch::Contains("outside [0,1]"));
    CHECK_THAT(error_of(dir.file("missing.safetensors"), like), Catch::StartsWith("--train-file"));
}

TEST_CASE("train file: the job trains on the file's images and labels, tests on the dataset", "[benz_features]") {
    ScratchDir dir;
    // Every training image labelled 3: a model trained on the file answers 3 everywhere, which the dataset's own
    // (balanced) training split would never teach it.
    write_set(dir.file("threes.safetensors"), 200, 0.25f, 3);
    train::JobConfig job;
    job.common.out = dir.file("run");
    job.common.epochs = 1;
    job.common.device = "cpu";
    job.data.dataset = "synthetic";
    job.data.train_file = dir.file("threes.safetensors");
    job.data.eval_n = 100;
    job.data.batch_size = 20;
    job.arch = "lenet5";
    job.method = "natural";
    job.trainer.recipe.optimizer = "adam";
    job.trainer.recipe.lr = 0.01;
    job.final_attacks = "fgsm";
    job.final_checkpoints = "last";
    std::ostringstream log;
    REQUIRE(train::run_job(job, log) == 0);
    INFO(log.str());
    CHECK(log.str().find("training images: 200 from " + dir.file("threes.safetensors")) != std::string::npos);
    const auto j = nlohmann::json::parse(util::read_file_text(dir.file("run/job.json")));
    CHECK(j.at("train_images") == 200);
    CHECK(j.at("train_file") == dir.file("threes.safetensors"));
    const auto r = nlohmann::json::parse(util::read_file_text(dir.file("run/eval_last/results.json")));
    CHECK(r.at("num_examples") == 100);   // the dataset's test images
    const nlohmann::json& clean = r.at("evaluations")[0];
    CHECK(clean.at("per_class_accuracy")[3].get<double>() == 1.0);
    const data::Dataset test = data::load_dataset("synthetic", "test");
    int threes = 0;
    for (int i = 0; i < 100; ++i) threes += test.labels[static_cast<size_t>(i)] == 3;
    CHECK(clean.at("accuracy").get<double>() == Approx(threes / 100.0));
}
