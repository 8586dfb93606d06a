#include "nn/checkpoint.h"

#include <cstdio>
#include <set>
#include <vector>

#include "nn/tensor_records.h"

namespace cw::nn {

namespace {
// "a, b, c, ... and 12 more": names stay readable when a whole model mismatches.
std::string name_list(const std::vector<std::string>& names, size_t limit = 12) {
    std::string s;
    for (size_t i = 0; i < names.size() && i < limit; ++i) s += (i ? ", " : "") + names[i];
    if (names.size() > limit) s += ", ... and " + std::to_string(names.size() - limit) + " more";
    return s;
}
}  // namespace

const char* classwise_version() { return "0.1.0"; }

Metadata checkpoint_metadata(const std::string& arch, const ModelConfig& cfg, const RunInfo& run) {
    Metadata m = model_metadata(arch, cfg);
    char eps[32];
    std::snprintf(eps, sizeof eps, "%.9g", run.eps);
    m["method"] = run.method;
    m["eps"] = eps;
    m["seed"] = std::to_string(run.seed);
    return m;
}

std::string input_geometry_mismatch(const std::string& model, const ModelConfig& cfg, const std::string& images,
                                    int64_t channels, int64_t height, int64_t width) {
    if (cfg.in_channels == channels && cfg.input_size == height && cfg.input_size == width) return "";
    auto chw = [](int64_t c, int64_t h, int64_t w) {
        return std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
    };
    return model + " was built for " + chw(cfg.in_channels, cfg.input_size, cfg.input_size) + " inputs, but " + images +
           " are " + chw(channels, height, width);
}

void add_module_state(st::File& file, Module& model, const std::string& prefix) {
    for (const auto& entry : model.state()) {
        const std::string name = prefix + entry.name;
        if (!file.tensors.emplace(name, record_from_tensor(*entry.tensor)).second)
            throw Error("checkpoint: two state entries are named '" + name + "'");
    }
}

std::string nonfinite_problems(const Records& records, const std::string& source) {
    std::vector<std::string> bad;
    for (const auto& [name, rec] : records) {
        const uint64_t n = st::count_nonfinite(*rec, source + ": tensor '" + name + "'");
        if (n) bad.push_back(name + " (" + std::to_string(n) + " non-finite value" + (n == 1 ? "" : "s") + ")");
    }
    if (bad.empty()) return "";
    return source + ": NaN or infinity in " + std::to_string(bad.size()) + " tensor" + (bad.size() == 1 ? "" : "s") +
           ": " + name_list(bad) + "; the weights are damaged (a diverged run, or a corrupted file)";
}

std::string module_state_problems(Module& model, const Records& records, const std::string& source) {
    std::vector<std::string> missing, unexpected, mismatched;
    std::set<std::string> known;
    for (const auto& entry : model.state()) {
        known.insert(entry.name);
        auto it = records.find(entry.name);
        if (it == records.end()) {
            missing.push_back(entry.name);
            continue;
        }
        const std::string why = record_mismatch(*it->second, *entry.tensor);
        if (!why.empty()) mismatched.push_back(entry.name + " (" + why + ")");
    }
    for (const auto& [name, rec] : records)
        if (!known.count(name)) unexpected.push_back(name);
    if (missing.empty() && unexpected.empty() && mismatched.empty()) return nonfinite_problems(records, source);
    std::string msg = source + ": checkpoint does not match the " + model.type_name() + " model";
    if (!missing.empty()) msg += "; missing " + std::to_string(missing.size()) + ": " + name_list(missing);
    if (!unexpected.empty()) msg += "; unexpected " + std::to_string(unexpected.size()) + ": " + name_list(unexpected);
    if (!mismatched.empty())
        msg += "; wrong shape or dtype " + std::to_string(mismatched.size()) + ": " + name_list(mismatched);
    return msg;
}

void load_module_state(Module& model, const Records& records, const std::string& source) {
    const std::string problems = module_state_problems(model, records, source);
    if (!problems.empty()) throw CheckpointError(problems);
    for (const auto& entry : model.state())
        copy_record_into(*records.at(entry.name), *entry.tensor, source + ": tensor '" + entry.name + "'");
}

void save_model(Module& model, const std::string& path, const Metadata& metadata) {
    st::File file;
    file.metadata = metadata;
    file.metadata.emplace("classwise_version", classwise_version());
    add_module_state(file, model, "");
    st::write_file(path, file);
}

void load_model(Module& model, const std::string& path) {
    const st::File file = st::read_file(path);
    // A run's state holds the model among the optimiser's and the averaging's tensors, under other names.
    const auto kind = file.metadata.find("kind");
    if (kind != file.metadata.end() && kind->second == "training_state")
        throw CheckpointError(path + ": a run's training state, not a model's weights: give that run's "
                              "last.safetensors or best_*.safetensors (--resume in its folder continues the run)");
    Records records;
    std::map<std::string, std::string> original;  // stripped -> as in the file, to report collisions
    for (const auto& [name, rec] : file.tensors) {
        const std::string key = st::strip_prefixes(name);
        auto [it, fresh] = original.emplace(key, name);
        if (!fresh)
            throw CheckpointError(path + ": tensors '" + it->second + "' and '" + name +
                                  "' both become '" + key + "' once the module./model. prefixes are stripped");
        records[key] = &rec;
    }
    load_module_state(model, records, path);
}

Metadata read_metadata(const std::string& path) { return st::read_metadata(path); }

LoadedModel load_model_from_checkpoint(const std::string& path) {
    LoadedModel out;
    out.metadata = read_metadata(path);
    try {
        out.spec = model_spec_from_metadata(out.metadata);
    } catch (const Error& e) {
        throw CheckpointError(path + ": " + e.what());
    }
    out.model = make_model(out.spec.arch, out.spec.config);
    load_model(*out.model, path);
    return out;
}

}  // namespace cw::nn
