#include "protocols/feature_set_jobs.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "datasets/registry.h"
#include "datasets/splits.h"
#include "nn/checkpoint.h"
#include "nn/safetensors.h"
#include "train/stop_signal.h"
#include "util/atomic_file.h"

namespace cw::protocols {

namespace fs = std::filesystem;

namespace {

std::vector<int64_t> feature_indices(const data::Dataset& train, int64_t n) {
    if (n <= 0) {
        std::vector<int64_t> all(static_cast<size_t>(train.size()));
        for (int64_t i = 0; i < train.size(); ++i) all[static_cast<size_t>(i)] = i;
        return all;
    }
    const int64_t per_class = (n + train.num_classes() - 1) / train.num_classes();
    std::vector<int64_t> idx = data::split_first_k_per_class(train.labels, train.num_classes(), per_class).val;
    std::sort(idx.begin(), idx.end());
    return idx;
}

// The reference arm's images: the same training images, unchanged, in the feature sets' format.
void write_original(const data::Dataset& train, const std::vector<int64_t>& idx, const std::string& path) {
    std::vector<float> px;
    std::vector<int32_t> labels;
    px.reserve(idx.size() * static_cast<size_t>(train.image_bytes()));
    for (int64_t i : idx) {
        const uint8_t* p = train.image(i);
        for (int64_t j = 0; j < train.image_bytes(); ++j) px.push_back(p[j] / 255.f);
        labels.push_back(train.labels[static_cast<size_t>(i)]);
    }
    st::File f;
    f.tensors["images"] = st::from_f32(px, {static_cast<int64_t>(idx.size()), train.channels, train.height, train.width});
    f.tensors["labels"] = st::from_i32(labels, {static_cast<int64_t>(labels.size())});
    f.metadata["dataset"] = train.name;
    st::write_file(path, f);
}

bool constructed(const std::string& dir) { return fs::exists(fs::path(dir) / "construction.json"); }

}  // namespace

std::string set_file(const std::string& job_dir) { return (fs::path(job_dir) / "set.safetensors").string(); }

std::shared_ptr<nn::Classifier> source_model(const std::string& flag, const std::string& file, const data::Dataset& train,
                                             Device device) {
    nn::LoadedModel m;
    try {
        m = nn::load_model_from_checkpoint(file);
    } catch (const std::exception& e) {
        throw std::invalid_argument(flag + " " + file + ": " + e.what());
    }
    auto c = std::dynamic_pointer_cast<nn::Classifier>(m.model);
    if (!c || !c->has_features())
        throw std::invalid_argument(flag + " " + file + ": architecture " + m.spec.arch +
                                    " has no representation accessor (small_cnn, lenet5, mnist_wong, preact_resnet*, resnet*, wrn*)");
    const std::string geometry = nn::input_geometry_mismatch(m.spec.arch, m.spec.config, train.name, train.channels,
                                                             train.height, train.width);
    if (!geometry.empty()) throw std::invalid_argument(flag + " " + file + ": " + geometry);
    if (m.spec.config.num_classes != train.num_classes())
        throw std::invalid_argument(flag + " " + file + ": the model has " + std::to_string(m.spec.config.num_classes) +
                                    " classes, " + train.name + " " + std::to_string(train.num_classes()));
    c->to(device);
    c->eval();
    return c;
}

study::Work original_set_work(const FeatureSetSpec& spec) {
    study::Work w;
    w.what = "the original set: the training images unchanged";
    w.run = [spec](const study::WorkRun& run, std::ostream& out) {
        const data::Dataset train = data::load_dataset(spec.dataset, "train", run.common.data_dir);
        const std::vector<int64_t> idx = feature_indices(train, spec.images);
        write_original(train, idx, set_file(run.dir));
        const nlohmann::json c = {{"images", static_cast<int64_t>(idx.size())}, {"steps", 0}, {"source", nullptr}};
        util::write_file_atomic((fs::path(run.dir) / "construction.json").string(), c.dump(2) + "\n");
        out << "wrote " << idx.size() << " training images to " << set_file(run.dir) << "\n";
        return 0;
    };
    w.finished = constructed;
    return w;
}

study::Work feature_set_work(const FeatureSetSpec& spec, const std::string& source_arm, const std::string& weights,
                             const std::string& flag) {
    study::Work w;
    w.what = "feature set from " + (weights.empty() ? source_arm : weights);
    w.run = [spec, source_arm, weights, flag](const study::WorkRun& run, std::ostream& out) {
        const std::string source =
            weights.empty() ? (fs::path(run.inputs.at(source_arm)) / "last.safetensors").string() : weights;
        const data::Dataset train = data::load_dataset(spec.dataset, "train", run.common.data_dir);
        const std::vector<int64_t> idx = feature_indices(train, spec.images);
        FeatureSetOptions o = spec.options;
        o.seed = run.seed;
        o.resume = run.common.resume;
        o.log = &out;
        o.source = source;
        out << idx.size() << " images, " << o.steps << " steps of " << o.step_size << " from " << source << "\n";
        auto model = source_model(flag, source, train, resolve_device(run.common.device, false));
        const FeatureSetSummary s = build_feature_dataset(*model, train, idx, set_file(run.dir), o);
        if (!s.finished) return train::stop_requested() == SIGTERM ? 143 : 130;
        const nlohmann::json c = {{"source", source},         {"images", s.images},
                                  {"steps", o.steps},         {"step_size", o.step_size},
                                  {"mean_start_loss", s.start_loss}, {"mean_final_loss", s.final_loss},
                                  {"mean_final_loss_8bit", s.final_loss_u8}, {"seconds", s.seconds}};
        util::write_file_atomic((fs::path(run.dir) / "construction.json").string(), c.dump(2) + "\n");
        return 0;
    };
    w.finished = constructed;
    return w;
}

}  // namespace cw::protocols
