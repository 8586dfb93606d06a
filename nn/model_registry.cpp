#include "nn/model_registry.h"

#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>

#include "nn/models/densenet.h"
#include "nn/models/dm_preact_resnet.h"
#include "nn/models/dm_wide_resnet.h"
#include "nn/models/googlenet.h"
#include "nn/models/gtsrb_cnn.h"
#include "nn/models/lenet5.h"
#include "nn/models/mnist_wong.h"
#include "nn/models/resnet.h"
#include "nn/models/small_cnn.h"
#include "nn/models/vgg.h"
#include "nn/models/wide_resnet.h"
#include "util/parse_number.h"

namespace cw::nn {

namespace {
using Factory = std::function<std::shared_ptr<Classifier>(const ModelConfig&)>;

// Models whose constructor takes (num_classes, in_channels, input_size).
template <class M>
Factory plain() {
    return [](const ModelConfig& c) { return std::make_shared<M>(c.num_classes, c.in_channels, c.input_size); };
}

Factory vgg(int depth) {
    return [=](const ModelConfig& c) { return std::make_shared<VGG>(depth, c.num_classes, c.in_channels, c.input_size); };
}

int64_t width_or(const ModelConfig& c, int64_t own) { return c.base_width ? c.base_width : own; }

Factory resnet(ResNet::Block block, std::vector<int> stages) {
    return [=](const ModelConfig& c) {
        return std::make_shared<ResNet>(block, stages, c.num_classes, c.in_channels, c.input_size, width_or(c, 64));
    };
}

Factory preact_resnet18() {
    return [](const ModelConfig& c) {
        return std::make_shared<PreActResNet>(std::vector<int>{2, 2, 2, 2}, c.num_classes, c.in_channels,
                                              c.input_size, c.preact_shortcut, c.preact_final_bn, width_or(c, 64));
    };
}

Factory dm_preact_resnet(int depth) {
    return [=](const ModelConfig& c) {
        return std::make_shared<DMPreActResNet>(depth, c.num_classes, c.in_channels, c.input_size, c.activation,
                                                width_or(c, 64));
    };
}

Factory dm_wide_resnet(int depth, int widen) {
    return [=](const ModelConfig& c) {
        return std::make_shared<DMWideResNet>(depth, widen, c.num_classes, c.in_channels, c.input_size, c.activation);
    };
}

Factory wide_resnet(int depth, int widen) {
    return [=](const ModelConfig& c) {
        return std::make_shared<WideResNet>(depth, widen, c.num_classes, c.in_channels, c.input_size, c.wrn_sub_block1);
    };
}

Factory densenet(std::vector<int> stages) {
    return [=](const ModelConfig& c) {
        return std::make_shared<DenseNet>(stages, 32, c.num_classes, c.in_channels, c.input_size);
    };
}

// Ordered as model_names() lists them: small MNIST/GTSRB nets first, then CIFAR architectures.
const std::vector<std::pair<std::string, Factory>>& registry() {
    using B = ResNet::Block;
    static const std::vector<std::pair<std::string, Factory>> table = {
        {"lenet5", plain<LeNet5>()},
        {"small_cnn", plain<SmallCNN>()},
        {"mnist_wong", plain<MnistWong>()},
        {"gtsrb_cnn", plain<GtsrbCnn>()},
        {"vgg16", vgg(16)},
        {"vgg19", vgg(19)},
        {"resnet18", resnet(B::Basic, {2, 2, 2, 2})},
        {"resnet34", resnet(B::Basic, {3, 4, 6, 3})},
        {"resnet50", resnet(B::Bottleneck, {3, 4, 6, 3})},
        {"preact_resnet18", preact_resnet18()},
        {"wrn28_10", wide_resnet(28, 10)},
        {"wrn34_10", wide_resnet(34, 10)},
        {"dm_preact_resnet18", dm_preact_resnet(18)},
        {"dm_preact_resnet34", dm_preact_resnet(34)},
        {"densenet121", densenet({6, 12, 24, 16})},
        {"densenet169", densenet({6, 12, 32, 32})},
        {"googlenet", plain<GoogLeNet>()},
    };
    return table;
}

std::string join_names() {
    std::string s;
    for (const auto& [name, f] : registry()) s += (s.empty() ? "" : ", ") + name;
    return s + ", wrnD_W (any WideResNet: depth D = 6n+4, widen factor W, e.g. wrn16_4, wrn70_16), dm_wrnD_W (the "
               "DeepMind-style WideResNet, e.g. dm_wrn28_10, dm_wrn70_16)";
}

// "<prefix><D>_<W>" (prefix "wrn" or "dm_wrn"): a WideResNet of any depth 6n+4 and widen factor W, so the small
// ones a CPU can train (wrn16_2) and the leaderboard's large ones (wrn70_16, dm_wrn106_16) need no table entry
// each. nullopt when arch has another shape; an Error when it has this shape with numbers no WideResNet has.
std::optional<Factory> parsed_wide_resnet(const std::string& arch, const std::string& prefix, bool deepmind) {
    if (arch.rfind(prefix, 0) != 0) return std::nullopt;
    const size_t sep = arch.find('_', prefix.size());
    if (sep == std::string::npos) return std::nullopt;
    const std::optional<long long> depth = util::whole_integer(arch.substr(prefix.size(), sep - prefix.size()));
    const std::optional<long long> widen = util::whole_integer(arch.substr(sep + 1));
    if (!depth || !widen) return std::nullopt;
    if (*depth < 10 || *depth > 1000 || (*depth - 4) % 6 != 0 || *widen < 1 || *widen > 64)
        throw Error("model architecture '" + arch + "': a WideResNet needs depth 6n+4 in [10, 1000] and widen " +
                    "factor in [1, 64] (e.g. " + prefix + "28_10)");
    const int d = static_cast<int>(*depth), w = static_cast<int>(*widen);
    return deepmind ? dm_wide_resnet(d, w) : wide_resnet(d, w);
}

std::optional<Factory> find_factory(const std::string& arch) {
    for (const auto& [name, factory] : registry())
        if (name == arch) return factory;
    if (auto f = parsed_wide_resnet(arch, "wrn", false)) return f;
    return parsed_wide_resnet(arch, "dm_wrn", true);
}

// The families that take ModelConfig's activation and base_width.
bool takes_activation(const std::string& arch) { return arch.rfind("dm_", 0) == 0; }
bool takes_base_width(const std::string& arch) {
    return arch.rfind("resnet", 0) == 0 || arch.rfind("preact_resnet", 0) == 0 || arch.rfind("dm_preact_resnet", 0) == 0;
}

std::string floats_to_string(const std::vector<float>& v) {
    if (v.empty()) return "none";
    std::string s;
    char buf[32];
    for (float x : v) {
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));  // 9 digits: exact float round trip
        s += (s.empty() ? "" : ",") + std::string(buf);
    }
    return s;
}

[[noreturn]] void bad_value(const std::string& key, const std::string& value, const std::string& expected) {
    throw Error("model metadata: " + key + " = '" + value + "' is not " + expected);
}

std::vector<float> floats_from_string(const std::string& key, const std::string& s) {
    std::vector<float> out;
    if (s.empty() || s == "none") return out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const std::optional<float> x = util::whole_float(item);
        if (!x) bad_value(key, s, "a comma-separated list of numbers");
        out.push_back(*x);
    }
    return out;
}

int64_t int_from_string(const std::string& key, const std::string& s) {
    const std::optional<long long> v = util::whole_integer(s);
    if (v && *v > 0) return *v;
    bad_value(key, s, "a positive integer");
}

bool bool_from_string(const std::string& key, const std::string& s) {
    if (s == "true" || s == "1") return true;
    if (s == "false" || s == "0") return false;
    bad_value(key, s, "true or false");
}
}  // namespace

std::shared_ptr<Module> make_model(const std::string& arch, const ModelConfig& cfg) {
    if (std::optional<Factory> factory = find_factory(arch)) {
        if (cfg.normalize_mean.size() != cfg.normalize_std.size())
            throw Error("make_model: normalize_mean and normalize_std must both be given, with equal lengths");
        if (!cfg.normalize_mean.empty() && static_cast<int64_t>(cfg.normalize_mean.size()) != cfg.in_channels)
            throw Error("make_model: " + std::to_string(cfg.normalize_mean.size()) + " normalisation values for " +
                        std::to_string(cfg.in_channels) + " input channels");
        if (cfg.num_classes < 1 || cfg.in_channels < 1 || cfg.input_size < 1)
            throw Error("make_model: num_classes, in_channels and input_size must be positive");
        if (cfg.activation != Activation::Relu && !takes_activation(arch))
            throw Error("make_model: " + arch + " is a ReLU network; activation " + activation_name(cfg.activation) +
                        " is for the dm_* models");
        if (cfg.base_width != 0 && !takes_base_width(arch))
            throw Error("make_model: " + arch + " has no base width (resnet*, preact_resnet*, dm_preact_resnet* do)");
        if (cfg.base_width < 0) throw Error("make_model: base_width must be positive");
        auto model = (*factory)(cfg);
        model->set_normalization(cfg.normalize_mean, cfg.normalize_std);
        return model;
    }
    throw Error("unknown model architecture '" + arch + "'; known: " + join_names());
}

bool is_model_name(const std::string& arch) {
    try {
        return find_factory(arch).has_value();
    } catch (const Error&) {
        return false;   // the shape of a generic name with numbers it cannot build (wrn17_2)
    }
}

std::vector<std::string> model_names() {
    std::vector<std::string> names;
    for (const auto& [name, f] : registry()) names.push_back(name);
    return names;
}

Metadata model_metadata(const std::string& arch, const ModelConfig& cfg) {
    Metadata m = {
        {"arch", arch},
        {"num_classes", std::to_string(cfg.num_classes)},
        {"in_channels", std::to_string(cfg.in_channels)},
        {"input_size", std::to_string(cfg.input_size)},
        {"normalize_mean", floats_to_string(cfg.normalize_mean)},
        {"normalize_std", floats_to_string(cfg.normalize_std)},
        {"preact_shortcut", cfg.preact_shortcut == PreActShortcut::FromActivation ? "activation" : "input"},
        {"preact_final_bn", cfg.preact_final_bn ? "true" : "false"},
        {"wrn_sub_block1", cfg.wrn_sub_block1 ? "true" : "false"},
    };
    if (cfg.activation != Activation::Relu) m["activation"] = activation_name(cfg.activation);
    if (cfg.base_width != 0) m["base_width"] = std::to_string(cfg.base_width);
    return m;
}

ModelSpec model_spec_from_metadata(const Metadata& m) {
    auto get = [&](const std::string& key) -> const std::string* {
        auto it = m.find(key);
        return it == m.end() ? nullptr : &it->second;
    };
    ModelSpec spec;
    const std::string* arch = get("arch");
    const std::string* classes = get("num_classes");
    for (const char* key : {"arch", "num_classes"})
        if (!get(key)) throw Error(std::string("model metadata has no '") + key + "': cannot tell which model to build");
    spec.arch = *arch;
    ModelConfig& c = spec.config;
    c.num_classes = int_from_string("num_classes", *classes);
    if (auto v = get("in_channels")) c.in_channels = int_from_string("in_channels", *v);
    if (auto v = get("input_size")) c.input_size = int_from_string("input_size", *v);
    if (auto v = get("normalize_mean")) c.normalize_mean = floats_from_string("normalize_mean", *v);
    if (auto v = get("normalize_std")) c.normalize_std = floats_from_string("normalize_std", *v);
    if (auto v = get("preact_shortcut")) {
        if (*v == "activation") c.preact_shortcut = PreActShortcut::FromActivation;
        else if (*v == "input") c.preact_shortcut = PreActShortcut::FromInput;
        else bad_value("preact_shortcut", *v, "'activation' or 'input'");
    }
    if (auto v = get("preact_final_bn")) c.preact_final_bn = bool_from_string("preact_final_bn", *v);
    if (auto v = get("wrn_sub_block1")) c.wrn_sub_block1 = bool_from_string("wrn_sub_block1", *v);
    if (auto v = get("activation")) {
        if (*v == "relu") c.activation = Activation::Relu;
        else if (*v == "silu" || *v == "swish") c.activation = Activation::Silu;
        else bad_value("activation", *v, "'relu' or 'silu'");
    }
    if (auto v = get("base_width")) c.base_width = int_from_string("base_width", *v);
    return spec;
}

}  // namespace cw::nn
