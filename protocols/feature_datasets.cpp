#include "protocols/feature_datasets.h"

#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "attacks/attack.h"
#include "datasets/batch.h"
#include "engine/autograd.h"
#include "engine/ops.h"
#include "engine/rng.h"
#include "nn/progress.h"
#include "nn/safetensors.h"
#include "train/stop_signal.h"
#include "util/format.h"

namespace cw::protocols {

namespace fs = std::filesystem;

std::vector<int64_t> start_indices(int64_t n, uint64_t seed) {
    if (n < 2) throw std::invalid_argument("feature dataset: needs at least 2 images (each starts from another one)");
    Rng rng(seed);
    std::vector<int64_t> start(static_cast<size_t>(n));
    // i + 1 + U{0..n-2} (mod n): uniform over every index but i.
    for (int64_t i = 0; i < n; ++i)
        start[static_cast<size_t>(i)] = (i + 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - 1)))) % n;
    return start;
}

namespace {

// ||a − b||_2 per row of [B, D] tensors; the small constant keeps the gradient finite at a perfect match.
Tensor row_distance(const Tensor& a, const Tensor& b) { return sqrt(add(sum(square(sub(a, b)), 1), 1e-12f)); }

}  // namespace

FeatureMatch match_features(nn::Classifier& model, const Tensor& targets, const Tensor& start, int64_t steps,
                            float step_size) {
    if (targets.shape() != start.shape() || targets.ndim() != 4)
        throw ShapeError("match_features: targets " + targets.describe() + " and starts " + start.describe() +
                         " must be equal [B,C,H,W]");
    attacks::ModeScope eval_mode(model, attacks::ModelMode::Eval);   // the caller's mode back afterwards
    const int64_t B = targets.size(0);
    Tensor goal;
    {
        NoGradGuard no_grad;
        goal = model.features(targets).detach();
    }
    Tensor x = clamp(start, 0.f, 1.f).detach();
    Tensor best = x.clone();
    Tensor best_loss = Tensor::full({B}, std::numeric_limits<float>::infinity(), x.device());
    FeatureMatch r;
    for (int64_t step = 0;; ++step) {
        InputGradOnlyGuard input_only;   // the weights are fixed: skip every dW
        Tensor xv = x.detach().set_requires_grad(true);
        const Tensor loss = row_distance(model.features(xv), goal);   // [B]
        {
            NoGradGuard no_grad;
            const Tensor l = loss.detach();
            if (step == 0) r.start_loss = l.to_vector();
            // keep the iterate where it improves (on the device: no per-step host copy)
            const Tensor better = reshape(greater(best_loss, l), {B, 1, 1, 1});
            best = add(best, mul(better, sub(x, best)));
            best_loss = minimum(best_loss, l);
        }
        if (step == steps) break;
        // The images' losses are independent, so the gradient of their sum is each image's own gradient.
        sum(loss).backward();
        NoGradGuard no_grad;
        const Tensor g = xv.grad();
        // Normalised per image: every image moves by step_size in L2, whatever its gradient's scale.
        const Tensor norm = add(sqrt(sum(square(reshape(g, {B, -1})), 1, true)), 1e-12f);   // [B,1]
        x = clamp(sub(x, mul(div(g, reshape(norm, {B, 1, 1, 1})), step_size)), 0.f, 1.f).detach();
    }
    r.images = best;
    r.final_loss = best_loss.to_vector();
    return r;
}

namespace {

uint64_t fnv1a(const std::vector<int64_t>& v) {
    uint64_t h = 1469598103934665603ull;
    for (int64_t x : v)
        for (int b = 0; b < 8; ++b) {
            h ^= static_cast<uint64_t>(x >> (8 * b)) & 0xff;
            h *= 1099511628211ull;
        }
    return h;
}

// The model's weights and buffers, hashed: a set built from other weights is never resumed, whatever its path.
uint64_t state_fnv1a(nn::Module& model) {
    uint64_t h = 1469598103934665603ull;
    for (const auto& e : model.state())
        for (float v : e.tensor->to_vector()) {
            uint32_t bits;
            std::memcpy(&bits, &v, 4);
            for (int b = 0; b < 4; ++b) {
                h ^= (bits >> (8 * b)) & 0xff;
                h *= 1099511628211ull;
            }
        }
    return h;
}

st::TensorRecord f32_record(const std::vector<float>& v) { return st::from_f32(v, {static_cast<int64_t>(v.size())}); }

// Numbers in log lines: the caller's stream may carry std::fixed and a precision of 0 from an earlier print.
std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

double mean_of(const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// What a part or the finished file must agree on to be reused.
std::string settings_key(nn::Module& model, const data::Dataset& data, const std::vector<int64_t>& indices,
                         const FeatureSetOptions& o) {
    return nlohmann::json{{"dataset", data.name},       {"images", indices.size()}, {"indices_fnv1a", fnv1a(indices)},
                          {"steps", o.steps},           {"step_size", o.step_size}, {"seed", o.seed},
                          {"model_fnv1a", state_fnv1a(model)}, {"batch_size", o.batch_size}}
        .dump();
}

struct Part {
    std::vector<float> images, start_loss, final_loss, final_loss_u8;
    std::vector<int32_t> labels;
    std::vector<int64_t> start_index;
};

st::File part_file(const Part& p, const std::vector<int64_t>& shape, const std::string& key) {
    st::File f;
    f.metadata["feature_set"] = key;
    f.tensors["images"] = st::from_f32(p.images, shape);
    f.tensors["labels"] = st::from_i32(p.labels, {static_cast<int64_t>(p.labels.size())});
    f.tensors["start_index"] = st::from_i64(p.start_index, {static_cast<int64_t>(p.start_index.size())});
    f.tensors["start_loss"] = f32_record(p.start_loss);
    f.tensors["final_loss"] = f32_record(p.final_loss);
    f.tensors["final_loss_u8"] = f32_record(p.final_loss_u8);
    return f;
}

Part read_part(const st::File& f) {
    Part p;
    p.images = st::to_f32(f.tensors.at("images"));
    p.labels = st::to_i32(f.tensors.at("labels"), "labels");
    p.start_index = st::to_i64(f.tensors.at("start_index"), "start_index");
    p.start_loss = st::to_f32(f.tensors.at("start_loss"));
    p.final_loss = st::to_f32(f.tensors.at("final_loss"));
    p.final_loss_u8 = st::to_f32(f.tensors.at("final_loss_u8"));
    return p;
}

// A part (or the finished file) written with these settings, or nothing.
bool reusable(const fs::path& file, const std::string& key) {
    if (!fs::exists(file)) return false;
    try {
        const auto meta = st::read_metadata(file.string());
        const auto it = meta.find("feature_set");
        return it != meta.end() && it->second == key;
    } catch (const std::exception&) {
        return false;   // a damaged part is rebuilt
    }
}

FeatureSetSummary summary_of(const Part& all) {
    FeatureSetSummary s;
    s.images = static_cast<int64_t>(all.labels.size());
    s.start_loss = mean_of(all.start_loss);
    s.final_loss = mean_of(all.final_loss);
    s.final_loss_u8 = mean_of(all.final_loss_u8);
    return s;
}

// Images lo..hi-1 of `indices`: each target's features matched from its start image (start[i] indexes `indices`),
// with the losses before, after, and after rounding to 256 levels.
Part build_part(nn::Classifier& model, const data::Dataset& data, const std::vector<int64_t>& indices,
                const std::vector<int64_t>& start, int64_t lo, int64_t hi, Device device, const FeatureSetOptions& o) {
    Part p;
    std::vector<int64_t> target_idx, start_idx;
    for (int64_t i = lo; i < hi; ++i) {
        target_idx.push_back(indices[static_cast<size_t>(i)]);
        start_idx.push_back(indices[static_cast<size_t>(start[static_cast<size_t>(i)])]);
    }
    const data::Batch targets = data::make_batch(data, target_idx, device);
    const data::Batch starts = data::make_batch(data, start_idx, device);
    FeatureMatch m = match_features(model, targets.images, starts.images, o.steps, o.step_size);
    p.images = m.images.to_vector();
    // The loss once the images are rounded to 256 levels, as a training set holds them (datasets/dataset.h).
    std::vector<float> rounded(p.images.size());
    for (size_t j = 0; j < rounded.size(); ++j) rounded[j] = std::round(p.images[j] * 255.f) / 255.f;
    {
        NoGradGuard no_grad;
        attacks::ModeScope eval_mode(model, attacks::ModelMode::Eval);
        const Tensor xr = Tensor::from_vector(rounded, targets.images.shape(), device);
        p.final_loss_u8 = row_distance(model.features(xr), model.features(targets.images)).to_vector();
    }
    p.labels = targets.labels.to_int_vector();
    p.start_index = start_idx;
    p.start_loss = m.start_loss;
    p.final_loss = m.final_loss;
    return p;
}

void append(Part& all, const Part& p) {
    all.images.insert(all.images.end(), p.images.begin(), p.images.end());
    all.labels.insert(all.labels.end(), p.labels.begin(), p.labels.end());
    all.start_index.insert(all.start_index.end(), p.start_index.begin(), p.start_index.end());
    all.start_loss.insert(all.start_loss.end(), p.start_loss.begin(), p.start_loss.end());
    all.final_loss.insert(all.final_loss.end(), p.final_loss.begin(), p.final_loss.end());
    all.final_loss_u8.insert(all.final_loss_u8.end(), p.final_loss_u8.begin(), p.final_loss_u8.end());
}

}  // namespace

FeatureSetSummary build_feature_dataset(nn::Classifier& model, const data::Dataset& data,
                                        const std::vector<int64_t>& indices, const std::string& path,
                                        const FeatureSetOptions& o) {
    if (o.steps < 0 || o.batch_size < 1 || !(o.step_size > 0))
        throw std::invalid_argument("feature dataset: steps >= 0, batch size >= 1 and step size > 0 required");
    if (!model.has_features())
        throw std::invalid_argument("feature dataset: " + model.type_name() + " has no representation accessor");
    for (int64_t i : indices)
        if (i < 0 || i >= data.size())
            throw std::invalid_argument("feature dataset: image index " + std::to_string(i) + " outside " + data.name);
    const int64_t N = static_cast<int64_t>(indices.size());
    const std::string key = settings_key(model, data, indices, o);
    std::ostream* log = o.log;
    if (o.resume && reusable(path, key)) {
        const FeatureSetSummary s = summary_of(read_part(st::read_file(path)));
        if (log) *log << "feature set " << path << " exists (same settings); kept\n";
        return s;
    }
    const fs::path parts = path + ".parts";
    if (!o.resume) fs::remove_all(parts);
    fs::create_directories(parts);
    const auto params = model.parameters();
    const Device device = params.empty() ? Device::cpu() : params.front()->device();
    const std::vector<int64_t> start = start_indices(N, o.seed);
    const std::vector<int64_t> image_shape = {data.channels, data.height, data.width};
    const int64_t D = data.image_bytes();
    const int64_t num_batches = (N + o.batch_size - 1) / o.batch_size;

    train::StopSignalScope signals;
    Part all;
    const auto t0 = std::chrono::steady_clock::now();
    int64_t built = 0, built_batches = 0, kept = 0;   // images / batches built by this call (for the ETA), kept
    for (int64_t k = 0; k < num_batches; ++k) {
        const int64_t lo = k * o.batch_size, hi = std::min(N, lo + o.batch_size);
        const fs::path file = parts / ("batch_" + std::to_string(k) + ".safetensors");
        Part p;
        if (o.resume && reusable(file, key)) {
            p = read_part(st::read_file(file.string()));
            kept += hi - lo;
        } else {
            p = build_part(model, data, indices, start, lo, hi, device, o);
            std::vector<int64_t> shape = image_shape;
            shape.insert(shape.begin(), hi - lo);
            st::write_file(file.string(), part_file(p, shape, key));   // atomic
            built += hi - lo;
            ++built_batches;
            if (log) {
                const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                const double eta = secs / static_cast<double>(built) * static_cast<double>(N - hi);
                *log << "feature set: batch " << k + 1 << "/" << num_batches << ", images " << hi << "/" << N
                     << ", feature loss " << num(mean_of(p.start_loss)) << " -> " << num(mean_of(p.final_loss)) << ", "
                     << util::duration_clock(secs) << " elapsed, ETA " << util::duration_clock(eta) << "\n" << std::flush;
            }
        }
        if (static_cast<int64_t>(p.labels.size()) != hi - lo || static_cast<int64_t>(p.images.size()) != (hi - lo) * D)
            throw std::runtime_error(file.string() + ": holds " + std::to_string(p.labels.size()) + " images, expected " +
                                     std::to_string(hi - lo));
        append(all, p);
        const bool hook = o.stop_after_parts > 0 && built_batches >= o.stop_after_parts;
        if (k + 1 < num_batches && (train::stop_requested() || hook)) {
            FeatureSetSummary s;
            s.finished = false;
            if (log) *log << "feature set: stopped after batch " << k + 1 << "/" << num_batches << "; the batches are in "
                          << parts.string() << " — continue with --resume\n";
            return s;
        }
    }
    if (log && kept) *log << "feature set: " << kept << " images kept from " << parts.string() << " (--resume)\n";
    std::vector<int64_t> shape = image_shape;
    shape.insert(shape.begin(), N);
    st::File f = part_file(all, shape, key);
    FeatureSetSummary s = summary_of(all);
    f.metadata["steps"] = std::to_string(o.steps);
    f.metadata["step_size"] = std::to_string(o.step_size);
    f.metadata["seed"] = std::to_string(o.seed);
    f.metadata["source_model"] = o.source;
    f.metadata["dataset"] = data.name;
    f.metadata["mean_start_loss"] = std::to_string(s.start_loss);
    f.metadata["mean_final_loss"] = std::to_string(s.final_loss);
    f.metadata["mean_final_loss_u8"] = std::to_string(s.final_loss_u8);
    st::write_file(path, f);   // atomic
    fs::remove_all(parts);
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (log) *log << "feature set " << path << ": " << N << " images, mean feature loss " << num(s.start_loss) << " -> "
                  << num(s.final_loss) << " (rounded to 8 bits: " << num(s.final_loss_u8) << "), "
                  << util::duration_clock(s.seconds) << "\n";
    return s;
}

}  // namespace cw::protocols
