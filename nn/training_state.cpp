#include "nn/training_state.h"

#include <cstdio>
#include <set>

#include "nn/tensor_records.h"
#include "util/parse_number.h"

namespace cw::nn {

namespace {
const char* const kModel = "model/";
const char* const kEma = "ema/";
const char* const kOptimizer = "optimizer/";
const char* const kRng = "rng/";
const char* const kMethod = "method/";
const char* const kMethodMeta = "method.";

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Records under a prefix, with the prefix removed.
Records with_prefix(const st::File& file, const std::string& prefix) {
    Records out;
    for (const auto& [name, rec] : file.tensors)
        if (starts_with(name, prefix)) out[name.substr(prefix.size())] = &rec;
    return out;
}

std::string format_double(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);  // exact round trip
    return buf;
}

const std::string& required(const st::File& file, const std::string& key, const std::string& path) {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end()) throw CheckpointError(path + ": training state has no '" + key + "' metadata");
    return it->second;
}

int64_t required_int(const st::File& file, const std::string& key, const std::string& path) {
    const std::string& s = required(file, key, path);
    if (const std::optional<long long> v = util::whole_integer(s)) return *v;
    throw CheckpointError(path + ": metadata '" + key + "' = '" + s + "' is not an integer");
}
}  // namespace

void save_training_state(const std::string& path, const TrainingState& s) {
    if (!s.model) throw Error("save_training_state: no model");
    st::File file;
    file.metadata = s.model_metadata;
    file.metadata["kind"] = "training_state";
    file.metadata["classwise_version"] = classwise_version();
    file.metadata["epoch"] = std::to_string(s.epoch);
    file.metadata["step"] = std::to_string(s.step);
    add_module_state(file, *s.model, kModel);
    if (s.ema) {
        add_module_state(file, s.ema->averaged(), kEma);
        file.metadata["ema.num_updates"] = std::to_string(s.ema->num_updates());
    }
    if (s.optimizer) {
        for (const auto& [name, t] : s.optimizer->state_tensors()) file.tensors[kOptimizer + name] = record_from_tensor(t);
        file.metadata["optimizer.lr"] = format_double(s.optimizer->lr());
        file.metadata["optimizer.steps"] = std::to_string(s.optimizer->steps());
    }
    for (const auto& [name, rng] : s.rngs) file.tensors[kRng + name] = record_from_u64(rng->state());
    for (const auto& [name, t] : s.method_tensors) file.tensors[kMethod + name] = record_from_tensor(t);
    for (const auto& [key, value] : s.method_metadata) file.metadata[kMethodMeta + key] = value;
    st::write_file(path, file);
}

void load_training_state(const std::string& path, TrainingState& s) {
    if (!s.model) throw Error("load_training_state: no model");
    const st::File file = st::read_file(path);
    auto kind = file.metadata.find("kind");
    if (kind == file.metadata.end() || kind->second != "training_state")
        throw CheckpointError(path + ": not a training-state file (a model checkpoint? load it with load_model)");

    // Everything that can be checked is checked before the first object changes.
    const Records model = with_prefix(file, kModel), ema = with_prefix(file, kEma);
    const Records optimizer = with_prefix(file, kOptimizer), rngs = with_prefix(file, kRng);
    std::string problems = module_state_problems(*s.model, model, path + " (model)");
    if (s.ema && problems.empty()) problems = module_state_problems(s.ema->averaged(), ema, path + " (EMA model)");
    if (!s.ema && !ema.empty()) problems = path + ": the file holds an EMA model but no EMA was given to restore it into";
    if (!problems.empty()) throw CheckpointError(problems);
    if (!s.optimizer && !optimizer.empty())
        throw CheckpointError(path + ": the file holds optimiser state but no optimiser was given");
    problems = nonfinite_problems(optimizer, path + " (optimiser state)");
    if (!problems.empty()) throw CheckpointError(problems);
    std::map<std::string, std::vector<uint64_t>> rng_words;
    for (const auto& [name, rec] : rngs) {
        if (!s.rngs.count(name)) throw CheckpointError(path + ": RNG '" + name + "' in the file was not given to restore");
        rng_words[name] = u64_from_record(*rec, path + ": rng '" + name + "'");
        if (rng_words[name].size() != s.rngs.at(name)->state().size())
            throw CheckpointError(path + ": RNG '" + name + "' has " + std::to_string(rng_words[name].size()) + " words");
    }
    for (const auto& [name, rng] : s.rngs)
        if (!rngs.count(name)) throw CheckpointError(path + ": the file has no state for RNG '" + name + "'");
    const int64_t epoch = required_int(file, "epoch", path), step = required_int(file, "step", path);

    load_module_state(*s.model, model, path + " (model)");
    if (s.ema) {
        load_module_state(s.ema->averaged(), ema, path + " (EMA model)");
        s.ema->set_num_updates(required_int(file, "ema.num_updates", path));
    }
    if (s.optimizer) {
        std::map<std::string, Tensor> tensors;
        for (const auto& [name, rec] : optimizer) tensors[name] = tensor_from_record(*rec, path + ": optimizer '" + name + "'");
        s.optimizer->load_state_tensors(tensors);
        // An optimiser of another kind ignores the entries it does not know: compare what it now holds.
        std::set<std::string> held;
        for (const auto& [name, t] : s.optimizer->state_tensors()) held.insert(name);
        for (const auto& [name, t] : tensors)
            if (!held.count(name))
                throw CheckpointError(path + ": optimiser state '" + name + "' was not taken by this optimiser (another kind?)");
        s.optimizer->set_lr(std::stof(required(file, "optimizer.lr", path)));
        s.optimizer->set_steps(required_int(file, "optimizer.steps", path));
    }
    for (const auto& [name, words] : rng_words) s.rngs.at(name)->set_state(words);
    s.epoch = epoch;
    s.step = step;
    s.method_tensors.clear();
    for (const auto& [name, rec] : with_prefix(file, kMethod))
        s.method_tensors[name] = tensor_from_record(*rec, path + ": method tensor '" + name + "'");
    s.method_metadata.clear();
    s.model_metadata.clear();
    for (const auto& [key, value] : file.metadata) {
        if (starts_with(key, kMethodMeta)) s.method_metadata[key.substr(std::string(kMethodMeta).size())] = value;
        else if (key != "kind" && key != "epoch" && key != "step" && !starts_with(key, "optimizer.") && !starts_with(key, "ema."))
            s.model_metadata[key] = value;
    }
}

}  // namespace cw::nn
