// Model checkpoints: round trips, strict loading, prefixes, dtype conversion, damaged files, metadata.
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "nn/checkpoint.h"
#include "nn/models/classifier.h"
#include "tests/test_nn_util.h"

using namespace cw;
using namespace cw_nn_test;
using Catch::Matchers::Contains;

namespace {

nn::ModelConfig small_config() {
    nn::ModelConfig c;
    c.num_classes = 5;
    c.in_channels = 3;
    c.input_size = 32;
    return c;
}

// Moves BN statistics and num_batches_tracked away from their initial values.
void train_forward(nn::Module& m, const Shape& input, uint64_t seed) {
    m.train();
    NoGradGuard ng;
    m.forward(cw_test::randn(input, seed, 1.f, false));
}

std::vector<float> eval_logits(nn::Module& m, const Tensor& x) {
    m.eval();
    NoGradGuard ng;
    return m.forward(x).to_vector();
}

void require_same_state(nn::Module& a, nn::Module& b) {
    auto sa = a.state(), sb = b.state();
    REQUIRE(sa.size() == sb.size());
    for (size_t i = 0; i < sa.size(); ++i) {
        INFO(sa[i].name);
        REQUIRE(sa[i].name == sb[i].name);
        if (sa[i].tensor->dtype() == DType::F32) REQUIRE(sa[i].tensor->to_vector() == sb[i].tensor->to_vector());
        else REQUIRE(sa[i].tensor->to_int_vector() == sb[i].tensor->to_int_vector());
    }
}

// The model's state as an st::File (what save_model writes), for crafting altered checkpoints.
st::File file_of(nn::Module& m) {
    st::File f;
    nn::add_module_state(f, m);
    return f;
}

}  // namespace

TEST_CASE("checkpoint: save -> load into a fresh model gives identical logits (PreAct ResNet-18)", "[nn]") {
    ScratchDir dir;
    nn::ModelConfig cfg;  // 10 classes, CIFAR
    auto model = nn::make_model("preact_resnet18", cfg);
    train_forward(*model, {4, 3, 32, 32}, 1);
    const auto meta = nn::checkpoint_metadata("preact_resnet18", cfg, {"pgd_at", 8.0 / 255, 0});
    const std::string path = dir.file("prn18.safetensors");
    nn::save_model(*model, path, meta);

    auto fresh = nn::make_model("preact_resnet18", cfg);  // different initial weights
    nn::load_model(*fresh, path);
    require_same_state(*model, *fresh);
    const Tensor x = cw_test::randn({2, 3, 32, 32}, 2, 1.f, false);
    REQUIRE(eval_logits(*fresh, x) == eval_logits(*model, x));

    // On disk: PyTorch names, F32 weights, num_batches_tracked an I64 scalar, the metadata given + version.
    const st::File f = st::read_file(path);
    REQUIRE(f.tensors.at("conv1.weight").dtype == st::DType::F32);
    REQUIRE(f.tensors.at("conv1.weight").shape == std::vector<int64_t>{64, 3, 3, 3});
    const auto& nbt = f.tensors.at("layer1.0.bn1.num_batches_tracked");
    REQUIRE(nbt.dtype == st::DType::I64);
    REQUIRE(nbt.shape.empty());
    REQUIRE(st::to_i64_scalar(nbt) == 1);
    REQUIRE(f.metadata.at("arch") == "preact_resnet18");
    REQUIRE(f.metadata.at("method") == "pgd_at");
    REQUIRE(f.metadata.at("eps") == "0.031372549");
    REQUIRE(f.metadata.at("seed") == "0");
    REQUIRE(f.metadata.at("normalize_mean") == "none");
    REQUIRE(f.metadata.at("preact_shortcut") == "activation");
    REQUIRE(f.metadata.at("classwise_version") == nn::classwise_version());
    REQUIRE(nn::read_metadata(path) == f.metadata);
}

TEST_CASE("checkpoint: strict loading lists missing, unexpected and mis-shaped names in one error", "[nn]") {
    ScratchDir dir;
    auto model = nn::make_model("lenet5", small_config());
    st::File f = file_of(*model);
    f.tensors.erase("fc2.bias");                                                     // missing
    f.tensors["fc4.weight"] = st::from_f32({1.f, 2.f}, {2});                         // unexpected
    f.tensors["conv1.weight"] = st::from_f32(std::vector<float>(6 * 3 * 3 * 3), {6, 3, 3, 3});  // 3x3, not 5x5
    f.tensors["fc1.bias"] = st::from_i64_scalar(3);                                  // wrong dtype
    const std::string path = dir.file("bad.safetensors");
    st::write_file(path, f);

    auto target = nn::make_model("lenet5", small_config());
    const auto before = target->state().front().tensor->to_vector();
    const std::string msg = error_of<nn::CheckpointError>([&] { nn::load_model(*target, path); });
    REQUIRE_THAT(msg, Contains(path) && Contains("missing 1: fc2.bias") && Contains("unexpected 1: fc4.weight"));
    REQUIRE_THAT(msg, Contains("conv1.weight (shape [6, 3, 3, 3], expected [6, 3, 5, 5])"));
    REQUIRE_THAT(msg, Contains("fc1.bias (dtype I64"));
    // nothing was copied
    REQUIRE(target->state().front().tensor->to_vector() == before);

    // A whole different architecture: the lists are truncated, not endless.
    auto resnet = nn::make_model("resnet18", small_config());
    nn::save_model(*resnet, dir.file("resnet.safetensors"));
    const std::string long_msg =
        error_of<nn::CheckpointError>([&] { nn::load_model(*target, dir.file("resnet.safetensors")); });
    REQUIRE_THAT(long_msg, Contains("missing 9: conv1.bias, conv2.weight") && Contains("unexpected 121:") &&
                               Contains("... and 109 more") && Contains("conv1.weight (shape [64, 3, 3, 3]"));
}

TEST_CASE("checkpoint: module. / model. prefixes are stripped; half and double precision are converted", "[nn]") {
    ScratchDir dir;
    auto model = nn::make_model("mnist_wong", [] { auto c = small_config(); c.in_channels = 1; c.input_size = 28; return c; }());
    train_forward(*model, {2, 1, 28, 28}, 3);
    st::File f;
    for (auto& [name, rec] : file_of(*model).tensors) f.tensors[(name[0] == '0' ? "module." : "model.module.") + name] = rec;
    // 5.bias as F64 and 7.bias as BF16: converted to F32 on load
    const auto b5 = model->state()[5].tensor->to_vector();
    REQUIRE(model->state()[5].name == "5.bias");
    st::TensorRecord f64;
    f64.dtype = st::DType::F64;
    f64.shape = {static_cast<int64_t>(b5.size())};
    for (float v : b5) {
        const double d = v;
        const auto* p = reinterpret_cast<const uint8_t*>(&d);  // little-endian host
        f64.bytes.insert(f64.bytes.end(), p, p + 8);
    }
    f.tensors["model.module.5.bias"] = f64;
    st::TensorRecord bf16;
    bf16.dtype = st::DType::BF16;
    bf16.shape = {5};
    const float bf_values[5] = {1.f, -2.f, 0.5f, 3.f, -0.25f};  // exactly representable in bfloat16
    for (float v : bf_values) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        bf16.bytes.push_back(static_cast<uint8_t>(bits >> 16));
        bf16.bytes.push_back(static_cast<uint8_t>(bits >> 24));
    }
    f.tensors["model.module.7.bias"] = bf16;
    const std::string path = dir.file("wrapped.safetensors");
    st::write_file(path, f);

    auto fresh = nn::make_model("mnist_wong", [] { auto c = small_config(); c.in_channels = 1; c.input_size = 28; return c; }());
    nn::load_model(*fresh, path);
    REQUIRE(fresh->state()[5].tensor->to_vector() == b5);
    REQUIRE(fresh->state()[7].tensor->to_vector() == std::vector<float>(bf_values, bf_values + 5));
    REQUIRE(fresh->state()[0].tensor->to_vector() == model->state()[0].tensor->to_vector());

    // two names that collide once stripped
    st::File clash = file_of(*model);
    clash.tensors["module.0.bias"] = clash.tensors.at("0.bias");
    st::write_file(path, clash);
    REQUIRE_THAT(error_of<nn::CheckpointError>([&] { nn::load_model(*fresh, path); }),
                 Contains("'0.bias' and 'module.0.bias' both become '0.bias'"));
}

TEST_CASE("checkpoint: damaged and missing files are clear errors naming the path", "[nn]") {
    ScratchDir dir;
    auto model = nn::make_model("lenet5", small_config());
    const std::string path = dir.file("ok.safetensors");
    nn::save_model(*model, path, {{"arch", "lenet5"}});
    const auto size = std::filesystem::file_size(path);

    const std::string truncated = dir.file("truncated.safetensors");
    std::filesystem::copy_file(path, truncated);
    std::filesystem::resize_file(truncated, size - 100);
    REQUIRE_THAT(error_of<st::FormatError>([&] { nn::load_model(*model, truncated); }), Contains(truncated));
    // the header is intact: the metadata can still be read
    REQUIRE(nn::read_metadata(truncated).at("arch") == "lenet5");

    const std::string garbage = dir.file("garbage.safetensors");
    std::ofstream(garbage) << "this is not a checkpoint at all";
    REQUIRE_THAT(error_of<st::FormatError>([&] { nn::load_model(*model, garbage); }), Contains(garbage));
    REQUIRE_THAT(error_of<st::FormatError>([&] { nn::read_metadata(garbage); }), Contains(garbage));
    const std::string tiny = dir.file("tiny.safetensors");
    std::ofstream(tiny) << "abc";
    REQUIRE_THAT(error_of<st::FormatError>([&] { nn::read_metadata(tiny); }), Contains("shorter than"));

    const std::string missing = dir.file("nope.safetensors");
    REQUIRE_THAT(error_of<st::IoError>([&] { nn::load_model(*model, missing); }), Contains(missing));
    REQUIRE_THAT(error_of<st::IoError>([&] { nn::read_metadata(missing); }), Contains(missing));
}

namespace {

std::vector<std::string> folder_listing(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        names.push_back(std::filesystem::relative(e.path(), dir).string());
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<char> file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Files may grow to `bytes` only while this lives (a full disk, as far as write() can tell: EFBIG).
struct FileSizeLimit {
    rlimit old{};
    void (*old_handler)(int);
    explicit FileSizeLimit(rlim_t bytes) : old_handler(std::signal(SIGXFSZ, SIG_IGN)) {
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
        rlimit lower = old;
        lower.rlim_cur = bytes;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &lower) == 0);
    }
    ~FileSizeLimit() {
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, old_handler);
    }
};

}  // namespace

TEST_CASE("checkpoint: a failed save leaves no file behind and the previous checkpoint intact", "[nn]") {
    ScratchDir dir;
    auto model = nn::make_model("lenet5", small_config());
    const std::string path = dir.file("model.safetensors");
    nn::save_model(*model, path, {{"arch", "lenet5"}});
    const std::vector<char> good = file_bytes(path);
    const auto listing = folder_listing(dir.path);
    REQUIRE(listing == std::vector<std::string>{"model.safetensors"});

    // the folder does not exist: nothing is created anywhere
    REQUIRE_THROWS_AS(nn::save_model(*model, dir.file("no/such/dir/x.safetensors")), st::IoError);
    REQUIRE(folder_listing(dir.path) == listing);

    // the disk fills up half way through writing new weights over the good checkpoint
    auto other = nn::make_model("lenet5", small_config());
    for (auto& e : other->state())
        if (e.tensor->dtype() == DType::F32) e.tensor->copy_from(add(*e.tensor, 1.f));
    {
        FileSizeLimit full(static_cast<rlim_t>(good.size() / 2));
        REQUIRE_THROWS_WITH(nn::save_model(*other, path, {{"arch", "lenet5"}}), Contains(path) && Contains("write"));
    }
    REQUIRE(folder_listing(dir.path) == listing);   // no temporary file left
    REQUIRE(file_bytes(path) == good);              // the old checkpoint, untouched
    auto reloaded = nn::make_model("lenet5", small_config());
    nn::load_model(*reloaded, path);
    REQUIRE(reloaded->state()[0].tensor->to_vector() == model->state()[0].tensor->to_vector());

    // the final rename fails (a folder sits at the target): the temporary file is removed
    const std::string blocked = dir.file("blocked.safetensors");
    std::filesystem::create_directories(std::filesystem::path(blocked) / "inside");
    const auto with_folder = folder_listing(dir.path);
    REQUIRE_THROWS_WITH(nn::save_model(*model, blocked), Contains(blocked) && Contains("rename"));
    REQUIRE(folder_listing(dir.path) == with_folder);
}

TEST_CASE("checkpoint: the metadata builds the right architecture (audit-tool path)", "[nn]") {
    ScratchDir dir;
    nn::ModelConfig cfg;
    cfg.num_classes = 43;
    cfg.normalize_mean = {0.3f, 0.3f, 0.3f};
    cfg.normalize_std = {0.2f, 0.2f, 0.2f};
    auto model = nn::make_model("gtsrb_cnn", cfg);
    const std::string path = dir.file("gtsrb.safetensors");
    auto meta = nn::model_metadata("gtsrb_cnn", cfg);
    meta["method"] = "frl";
    nn::save_model(*model, path, meta);

    const nn::LoadedModel loaded = nn::load_model_from_checkpoint(path);
    REQUIRE(loaded.spec.arch == "gtsrb_cnn");
    REQUIRE(loaded.spec.config.num_classes == 43);
    REQUIRE(loaded.metadata.at("method") == "frl");
    auto* classifier = dynamic_cast<nn::Classifier*>(loaded.model.get());
    REQUIRE(classifier->normalization());
    const Tensor x = cw_test::randn({2, 3, 32, 32}, 4, 1.f, false);
    REQUIRE(eval_logits(*loaded.model, x) == eval_logits(*model, x));

    // no arch in the metadata: say so
    nn::save_model(*model, path);
    REQUIRE_THAT(error_of<nn::CheckpointError>([&] { nn::load_model_from_checkpoint(path); }),
                 Contains(path) && Contains("no 'arch'"));
}
