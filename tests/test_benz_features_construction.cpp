// Ilyas et al.'s feature-dataset construction (protocols/feature_datasets.h) on the synthetic set with a LeNet-5:
// the L2 descent moves each image's representation toward its target's from another image, in [0,1], by exactly
// the step size per image and step; the starting images are other images, drawn reproducibly; the written set is
// deterministic, and an interrupted construction resumed from its saved batches equals an uninterrupted one.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <set>
#include <sstream>

#include "datasets/batch.h"
#include "datasets/registry.h"
#include "engine/ops.h"
#include "nn/model_registry.h"
#include "nn/safetensors.h"
#include "protocols/feature_datasets.h"
#include "tests/test_nn_util.h"

using namespace cw;
using cw_nn_test::ScratchDir;

namespace {

const data::Dataset& synthetic_train() {
    static const data::Dataset d = data::load_dataset("synthetic", "train", "");
    return d;
}

std::shared_ptr<nn::Classifier> lenet(uint64_t seed) {
    manual_seed(seed);   // the weights: the same model whatever ran before
    nn::ModelConfig c;
    c.num_classes = 10;
    c.in_channels = 3;
    c.input_size = 32;
    auto m = std::dynamic_pointer_cast<nn::Classifier>(nn::make_model("lenet5", c));
    REQUIRE(m);
    return m;
}

std::vector<float> row_distances(nn::Classifier& m, const Tensor& a, const Tensor& b) {
    NoGradGuard no_grad;
    const Tensor d = sub(m.features(a), m.features(b));
    return sqrt(sum(square(d), 1)).to_vector();
}

std::vector<float> l2_per_image(const Tensor& a, const Tensor& b) {
    const int64_t n = a.size(0);
    return sqrt(sum(square(reshape(sub(a, b), {n, -1})), 1)).to_vector();
}

}  // namespace

TEST_CASE("feature datasets: the descent moves a batch's representation toward its target", "[benz_features]") {
    auto model = lenet(3);
    model->train();   // the descent must run in eval mode and give the caller's mode back
    const std::vector<int64_t> targets_idx = {0, 1, 2, 3, 4, 5, 6, 7};
    const std::vector<int64_t> start = protocols::start_indices(8, 11);
    const data::Batch targets = data::make_batch(synthetic_train(), targets_idx, Device::cpu());
    const data::Batch starts = data::make_batch(synthetic_train(), start, Device::cpu());
    // Every start is another image, and a different picture.
    for (size_t i = 0; i < start.size(); ++i) CHECK(start[i] != targets_idx[i]);
    for (float d : l2_per_image(targets.images, starts.images)) CHECK(d > 1.f);

    const protocols::FeatureMatch r = protocols::match_features(*model, targets.images, starts.images, 40, 0.1f);
    CHECK(model->is_training());
    model->eval();
    REQUIRE(r.images.shape() == targets.images.shape());
    for (float v : r.images.to_vector()) REQUIRE((v >= 0.f && v <= 1.f));
    const std::vector<float> start_loss = row_distances(*model, starts.images, targets.images);
    const std::vector<float> final_loss = row_distances(*model, r.images, targets.images);
    REQUIRE(r.start_loss.size() == 8);
    REQUIRE(r.final_loss.size() == 8);
    for (size_t i = 0; i < 8; ++i) {
        INFO("image " << i << ": " << start_loss[i] << " -> " << final_loss[i]);
        CHECK(r.start_loss[i] == Approx(start_loss[i]).epsilon(1e-4));
        CHECK(r.final_loss[i] == Approx(final_loss[i]).epsilon(1e-3).margin(1e-5));   // the images returned are those measured
        CHECK(final_loss[i] < 0.5f * start_loss[i]);                               // a real move, not a wobble
    }
    // The images moved (at most 40 steps of 0.1 in L2), and stayed far from the target pictures themselves:
    // matching a representation does not copy the image.
    const std::vector<float> moved = l2_per_image(r.images, starts.images);
    for (float d : moved) {
        CHECK(d > 0.05f);
        CHECK(d <= 4.0f + 1e-3f);
    }
}

TEST_CASE("feature datasets: every step moves every image by the step size in L2", "[benz_features]") {
    // Starts well inside [0,1] and a step of 0.01: no pixel reaches the box, so each image's move is exactly the
    // step size — the gradient is normalised per image, not over the batch.
    auto model = lenet(5);
    const data::Batch targets = data::make_batch(synthetic_train(), {10, 11, 12, 13}, Device::cpu());
    const data::Batch raw = data::make_batch(synthetic_train(), {20, 31, 42, 53}, Device::cpu());
    const Tensor starts = add(mul(raw.images, 0.5f), 0.25f);
    const protocols::FeatureMatch r = protocols::match_features(*model, targets.images, starts, 1, 0.01f);
    const std::vector<float> moved = l2_per_image(r.images, starts);
    for (size_t i = 0; i < moved.size(); ++i) {
        INFO("image " << i);
        CHECK(r.final_loss[i] < r.start_loss[i]);   // the step went downhill, so it is the image kept
        CHECK(moved[i] == Approx(0.01f).epsilon(1e-3));
    }
    // Zero steps: the starts, with their loss.
    const protocols::FeatureMatch none = protocols::match_features(*model, targets.images, starts, 0, 0.01f);
    cw_test::require_close(none.images.to_vector(), starts.to_vector(), 0);
    CHECK(none.final_loss == none.start_loss);
}

TEST_CASE("feature datasets: each image starts from another one, uniformly and reproducibly", "[benz_features]") {
    const std::vector<int64_t> a = protocols::start_indices(1000, 7);
    CHECK(a == protocols::start_indices(1000, 7));
    CHECK(a != protocols::start_indices(1000, 8));
    std::vector<int> hits(1000, 0);
    for (size_t i = 0; i < a.size(); ++i) {
        REQUIRE(a[i] != static_cast<int64_t>(i));
        REQUIRE((a[i] >= 0 && a[i] < 1000));
        ++hits[static_cast<size_t>(a[i])];
    }
    // 1000 draws over 999 candidates each: about 1 hit per index; a shifted or clustered draw is far off that.
    int unused = 0;
    for (int h : hits) unused += h == 0;
    CHECK(unused > 300);   // Poisson(1): e^-1 ≈ 37% unused
    CHECK(unused < 440);
    const std::vector<int64_t> two = protocols::start_indices(2, 1);
    CHECK(two == std::vector<int64_t>{1, 0});
    CHECK_THROWS_WITH(protocols::start_indices(1, 0), Catch::Contains("at least 2 images"));
}

TEST_CASE("feature datasets: the file, its determinism, and resuming an interrupted construction", "[benz_features]") {
    ScratchDir dir;
    auto model = lenet(9);
    const std::vector<int64_t> idx = {3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610};   // 12 images, 3 batches
    protocols::FeatureSetOptions o;
    o.steps = 8;
    o.step_size = 0.1f;
    o.batch_size = 5;
    o.seed = 4;
    o.source = "lenet5 test model";
    std::ostringstream log;
    o.log = &log;
    const protocols::FeatureSetSummary s = protocols::build_feature_dataset(*model, synthetic_train(), idx, dir.file("a.safetensors"), o);
    CHECK(s.finished);
    CHECK(s.images == 12);
    CHECK(s.final_loss < s.start_loss);
    CHECK(log.str().find("feature set: batch 3/3, images 12/12") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("a.safetensors.parts")));

    const st::File a = st::read_file(dir.file("a.safetensors"));
    REQUIRE(a.tensors.at("images").shape == std::vector<int64_t>{12, 3, 32, 32});
    REQUIRE(a.tensors.at("labels").dtype == st::DType::I32);
    const std::vector<float> px = st::to_f32(a.tensors.at("images"));
    for (float v : px) REQUIRE((v >= 0.f && v <= 1.f));
    std::vector<int32_t> labels(12);
    std::memcpy(labels.data(), a.tensors.at("labels").bytes.data(), 48);
    std::vector<int64_t> starts(12);
    std::memcpy(starts.data(), a.tensors.at("start_index").bytes.data(), 96);
    const std::set<int64_t> pool(idx.begin(), idx.end());
    for (size_t i = 0; i < 12; ++i) {
        CHECK(labels[i] == synthetic_train().labels[static_cast<size_t>(idx[i])]);   // the target's label is kept
        CHECK(starts[i] != idx[i]);
        CHECK(pool.count(starts[i]));   // the starts are drawn among the set's own images
    }
    CHECK(a.metadata.at("steps") == "8");
    CHECK(a.metadata.at("source_model") == "lenet5 test model");

    // The same settings give the same bytes.
    protocols::build_feature_dataset(*model, synthetic_train(), idx, dir.file("b.safetensors"), o);
    CHECK(st::read_file(dir.file("b.safetensors")).tensors.at("images").bytes == a.tensors.at("images").bytes);

    // Interrupted after one batch: nothing final, that batch saved; --resume builds the rest and equals `a`.
    protocols::FeatureSetOptions cut = o;
    cut.stop_after_parts = 1;
    std::ostringstream cut_log;
    cut.log = &cut_log;
    const protocols::FeatureSetSummary c = protocols::build_feature_dataset(*model, synthetic_train(), idx, dir.file("c.safetensors"), cut);
    CHECK_FALSE(c.finished);
    CHECK_FALSE(std::filesystem::exists(dir.file("c.safetensors")));
    CHECK(std::filesystem::exists(dir.file("c.safetensors.parts/batch_0.safetensors")));
    CHECK_FALSE(std::filesystem::exists(dir.file("c.safetensors.parts/batch_1.safetensors")));
    protocols::FeatureSetOptions resume = o;
    resume.resume = true;
    std::ostringstream resume_log;
    resume.log = &resume_log;
    protocols::build_feature_dataset(*model, synthetic_train(), idx, dir.file("c.safetensors"), resume);
    INFO(resume_log.str());
    CHECK(resume_log.str().find("5 images kept") != std::string::npos);
    CHECK(resume_log.str().find("batch 1/3") == std::string::npos);   // not rebuilt
    CHECK(resume_log.str().find("batch 2/3") != std::string::npos);
    const st::File c_file = st::read_file(dir.file("c.safetensors"));
    for (const char* t : {"images", "labels", "start_index", "final_loss"}) {
        INFO(t);
        CHECK(c_file.tensors.at(t).bytes == a.tensors.at(t).bytes);
    }

    // A finished file with the same settings is kept; other settings rebuild it.
    std::ostringstream again;
    resume.log = &again;
    protocols::build_feature_dataset(*model, synthetic_train(), idx, dir.file("c.safetensors"), resume);
    CHECK(again.str().find("exists (same settings); kept") != std::string::npos);
    resume.steps = 3;
    std::ostringstream other;
    resume.log = &other;
    protocols::build_feature_dataset(*model, synthetic_train(), idx, dir.file("c.safetensors"), resume);
    CHECK(other.str().find("batch 1/3") != std::string::npos);
    CHECK(st::read_metadata(dir.file("c.safetensors")).at("steps") == "3");
    // Other weights under the same source name: rebuilt too.
    auto other_model = lenet(10);
    std::ostringstream other_weights;
    resume.log = &other_weights;
    protocols::build_feature_dataset(*other_model, synthetic_train(), idx, dir.file("c.safetensors"), resume);
    CHECK(other_weights.str().find("batch 1/3") != std::string::npos);
}
