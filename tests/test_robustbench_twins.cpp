// RobustBench's CIFAR families, converted: classwise's models against PyTorch twins written after RobustBench's
// definitions (tools/robustbench_models.py), each briefly trained on CIFAR-10, saved in one of RobustBench's
// checkpoint layouts and converted by tools/convert_robustbench.py (tools/make_robustbench_twins.py writes the
// fixtures). The references are PyTorch's float64 answers; classwise computes in float32.
//
// The converter itself runs where Debian's PyTorch is installed (/usr/bin/python3 with torch): random-init twins
// of every family converted afresh, and its refusals. Without PyTorch those tests skip, and are counted.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>

#include "datasets/error.h"
#include "datasets/loaders.h"
#include "datasets/paths.h"
#include "engine/ops.h"
#include "nn/checkpoint.h"
#include "nn/models/classifier.h"
#include "tests/fixture_file.h"
#include "tests/skip.h"
#include "tests/test_process.h"

using namespace cw;
namespace fs = std::filesystem;

namespace {

const char* const kScript = "tools/make_robustbench_twins.py";
const std::vector<std::string> kTwins = {"wrn10_1", "dm_wrn10_1_silu", "dm_preact_resnet18_w2_silu",
                                         "preact_resnet18_w2", "resnet18_w2", "resnet50_w2",
                                         "dm_wrn10_1_relu_c100"};
constexpr int64_t kGradImages = 2;  // the script's GRAD_IMAGES

nn::LoadedModel load_twin(const std::string& path) {
    nn::LoadedModel m = nn::load_model_from_checkpoint(path);
    m.model->eval();
    return m;
}

// The logits of the 8 fixed images and the input gradient of the summed cross-entropy on the first 2, against the
// references of `refs` for `twin`.
void check_twin(nn::Module& model, const st::File& refs, const std::string& refs_name, const std::string& twin) {
    INFO("twin " << twin);
    const std::vector<float> x = cw_nn_test::fixture_f32(refs, refs_name, "inputs");
    const std::vector<float> labels = cw_nn_test::fixture_f32(refs, refs_name, "labels");
    const int64_t n = static_cast<int64_t>(labels.size());
    Tensor logits;
    {
        NoGradGuard no_grad;
        logits = model.forward(Tensor::from_vector(x, {n, 3, 32, 32}));
    }
    const double logit_error = cw_nn_test::worst_error(logits.to_vector(), cw_nn_test::fixture_f32(refs, refs_name, twin + ".logits"));
    CHECK(logit_error < 1e-5);

    const std::vector<float> first(x.begin(), x.begin() + kGradImages * 3 * 32 * 32);
    Tensor xg = Tensor::from_vector(first, {kGradImages, 3, 32, 32}).set_requires_grad(true);
    std::vector<int32_t> y;
    for (int64_t i = 0; i < kGradImages; ++i) y.push_back(static_cast<int32_t>(labels[i]));
    cross_entropy(model.forward(xg), Tensor::from_labels(y), {0.f, {}, Reduction::Sum}).backward();
    const double grad_error = cw_nn_test::worst_error(xg.grad().to_vector(), cw_nn_test::fixture_f32(refs, refs_name, twin + ".input_grad"));
    CHECK(grad_error < 1e-4);
}

bool pytorch_available(std::string* why) {
    if (!fs::exists("/usr/bin/python3")) {
        *why = "no /usr/bin/python3";
        return false;
    }
    if (cw_test::run_shell("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1").code != 0) {
        *why = "/usr/bin/python3 has no torch (apt-get install python3-torch)";
        return false;
    }
    return true;
}

#define CW_SKIP_WITHOUT_PYTORCH()                 \
    do {                                          \
        std::string cw_why_;                      \
        if (!pytorch_available(&cw_why_)) CW_SKIP(cw_why_); \
    } while (0)

fs::path scratch_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string converter() { return "/usr/bin/python3 " + (cw_test::repo_root() / "tools/convert_robustbench.py").string(); }

}  // namespace

TEST_CASE("robustbench twins: converted logits and input gradients equal PyTorch's", "[robustbench][nn]") {
    const st::File& refs = cw_nn_test::fixture_file("robustbench/references.safetensors", kScript);
    REQUIRE(refs.metadata.at("trained") == "true");
    for (const std::string& twin : kTwins) {
        const std::string path = cw_nn_test::fixture_path("robustbench/" + twin + ".safetensors");
        REQUIRE(!path.empty());
        nn::LoadedModel m = load_twin(path);
        CHECK(m.metadata.at("method") == "robustbench");
        check_twin(*m.model, refs, "references.safetensors", twin);
    }
}

TEST_CASE("robustbench twins: the metadata names architecture, activation, normalisation, dataset, threat model",
          "[robustbench][nn]") {
    const auto meta = [](const std::string& twin) {
        return nn::read_metadata(cw_nn_test::fixture_path("robustbench/" + twin + ".safetensors"));
    };
    const nn::Metadata dm = meta("dm_wrn10_1_silu");
    CHECK(dm.at("arch") == "dm_wrn10_1");
    CHECK(dm.at("activation") == "silu");
    CHECK(dm.at("normalize_mean") == "0.4914,0.4822,0.4465");
    CHECK(dm.at("normalize_std") == "0.2471,0.2435,0.2616");
    CHECK(dm.at("dataset") == "cifar10");
    CHECK(dm.at("threat_model") == "Linf");
    // saved mu/sigma (RobustBench's wrappers) become the normalisation: ResNet-50 with Engstrom et al.'s std
    const nn::Metadata r50 = meta("resnet50_w2");
    CHECK(r50.at("normalize_std") == "0.202299997,0.199399993,0.201000005");  // the saved float32 values
    CHECK(r50.at("base_width") == "2");
    CHECK(meta("resnet18_w2").at("normalize_mean") == "none");
    const nn::Metadata pre = meta("preact_resnet18_w2");
    CHECK(pre.at("preact_shortcut") == "input");
    CHECK(pre.at("preact_final_bn") == "false");
    CHECK(meta("wrn10_1").at("wrn_sub_block1") == "true");
    // A CIFAR-100 model: CIFAR-100's mean and std (RobustBench's DM models build them in), ReLU, 100 logits.
    const nn::Metadata c100 = meta("dm_wrn10_1_relu_c100");
    CHECK(c100.at("dataset") == "cifar100");
    CHECK(c100.at("activation") == "relu");
    CHECK(c100.at("normalize_mean") == "0.5071,0.4865,0.4409");
    CHECK(c100.at("normalize_std") == "0.2673,0.2564,0.2762");
    CHECK(c100.at("num_classes") == "100");
}

TEST_CASE("robustbench twins: per-class predictions on real CIFAR-10 test images are PyTorch's",
          "[robustbench][real-data]") {
    const std::string dir = data::resolve_data_dir("");
    std::optional<data::Dataset> test;
    try {
        test = data::load_cifar10(dir, "test");
    } catch (const data::DataError& e) {
        if (std::string(e.what()).find("not found") == std::string::npos) throw;
        CW_SKIP("CIFAR-10 not found under " + dir + ". " + data::how_to_get("cifar10") +
                "; or point CLASSWISE_DATA at the folder that holds it");
    }
    const int64_t n = 200;  // the script's first 200 test images
    std::vector<float> x(static_cast<size_t>(n * 3072));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < 3072; ++k) x[i * 3072 + k] = test->image(i)[k] / 255.f;
    const st::File& refs = cw_nn_test::fixture_file("robustbench/references.safetensors", kScript);
    for (const std::string& twin : kTwins) {
        INFO("twin " << twin);
        nn::LoadedModel m = load_twin(cw_nn_test::fixture_path("robustbench/" + twin + ".safetensors"));
        NoGradGuard no_grad;
        const std::vector<float> got = m.model->forward(Tensor::from_vector(x, {n, 3, 32, 32})).to_vector();
        const std::vector<float> want = cw_nn_test::fixture_f32(refs, "references.safetensors", twin + ".cifar_logits");
        CHECK(cw_nn_test::worst_error(got, want) < 1e-5);
        // per class: which images each class predicts, and how many of them are right
        // (a CIFAR-100 twin has 100 logits per image; its CIFAR-10 training taught it the first 10 classes)
        const int64_t k = static_cast<int64_t>(want.size()) / n;
        REQUIRE(k * n == static_cast<int64_t>(want.size()));
        std::vector<int> got_per_class(k), want_per_class(k), correct(k), want_correct(k);
        int differ = 0;
        for (int64_t i = 0; i < n; ++i) {
            const auto row = [&](const std::vector<float>& v) {
                return static_cast<int>(std::max_element(v.begin() + i * k, v.begin() + (i + 1) * k) - (v.begin() + i * k));
            };
            const int g = row(got), w = row(want);
            differ += g != w;
            ++got_per_class[g];
            ++want_per_class[w];
            correct[g] += g == test->labels[i];
            want_correct[w] += w == test->labels[i];
        }
        CHECK(differ == 0);
        CHECK(got_per_class == want_per_class);
        CHECK(correct == want_correct);
        // briefly trained: better than chance, so the predictions are more than one class
        CHECK(std::accumulate(want_correct.begin(), want_correct.end(), 0) > n / 10 + 5);
    }
}

TEST_CASE("robustbench converter: random-init twins of every family, converted afresh, equal PyTorch's",
          "[robustbench][python]") {
    CW_SKIP_WITHOUT_PYTORCH();
    const fs::path dir = scratch_dir("cw_robustbench_random");
    const auto o = cw_test::run_shell("/usr/bin/python3 " + (cw_test::repo_root() / kScript).string() +
                                      " --random-init " + dir.string() + " 2>&1");
    INFO(o.text);
    REQUIRE(o.code == 0);
    const st::File refs = st::read_file((dir / "references.safetensors").string());
    REQUIRE(refs.metadata.at("trained") == "false");
    for (const std::string& twin : kTwins) {
        nn::LoadedModel m = load_twin((dir / (twin + ".safetensors")).string());
        check_twin(*m.model, refs, "references.safetensors", twin);
    }
    fs::remove_all(dir);
}

TEST_CASE("robustbench converter: a bad checkpoint is one line naming the key, and no file", "[robustbench][python]") {
    CW_SKIP_WITHOUT_PYTORCH();
    const fs::path dir = scratch_dir("cw_robustbench_refusals");
    const auto made = cw_test::run_shell("/usr/bin/python3 " + (cw_test::repo_root() / kScript).string() +
                                         " --random-init " + dir.string() + " 2>&1");
    REQUIRE(made.code == 0);
    // Bad variants of the module-prefixed DM PreAct twin, written by torch itself.
    const std::string good = (dir / "dm_preact_resnet18_w2_silu.pt").string();
    const std::string edit =
        "/usr/bin/python3 -c \"import sys, torch; sd = torch.load(sys.argv[1]); exec(sys.argv[3]); "
        "torch.save(sd, sys.argv[2])\" " + good + " ";
    REQUIRE(cw_test::run_shell(edit + (dir / "unknown.pt").string() + " \"sd['module.extra.weight'] = torch.zeros(3)\"").code == 0);
    REQUIRE(cw_test::run_shell(edit + (dir / "shape.pt").string() + " \"sd['module.conv_2d.weight'] = torch.zeros(2, 3, 5, 5)\"").code == 0);
    REQUIRE(cw_test::run_shell(edit + (dir / "missing.pt").string() + " \"del sd['module.layer_1.0.shortcut.weight']\"").code == 0);
    {
        std::ifstream in(good, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(dir / "truncated.pt", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
        std::ofstream(dir / "text.pt") << "not a checkpoint\n";
    }
    const std::string args = " --arch dm_preact_resnet18 --activation silu --normalize cifar10 --base-width 2 -o ";
    struct Case {
        std::string file, says;
    };
    for (const Case& c : std::vector<Case>{{"unknown.pt", "unknown key 'extra.weight'"},
                                           {"shape.pt", "key 'conv_2d.weight' has shape [2, 3, 5, 5], dm_preact_resnet18 expects [2, 3, 3, 3]"},
                                           {"missing.pt", "key 'layer_1.0.shortcut.weight' of dm_preact_resnet18 is missing"},
                                           {"truncated.pt", "cannot read as a PyTorch checkpoint"},
                                           {"text.pt", "cannot read as a PyTorch checkpoint"}}) {
        INFO(c.file);
        const fs::path out = dir / ("out_" + c.file + ".safetensors");
        const auto o = cw_test::run_shell(converter() + " " + (dir / c.file).string() + args + out.string() + " 2>&1");
        INFO(o.text);
        CHECK(o.code == 1);
        CHECK(std::count(o.text.begin(), o.text.end(), '\n') == 1);
        CHECK(o.text.rfind("convert_robustbench: ", 0) == 0);
        CHECK(o.text.find(c.says) != std::string::npos);
        CHECK(!fs::exists(out));
    }
    // No temporary file is left beside the outputs.
    for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().string().find(".tmp") == std::string::npos);
    // The good file converts, with and without the module. prefix (the same tensors): strip_prefixes at work.
    const fs::path ok = dir / "ok.safetensors";
    const auto o = cw_test::run_shell(converter() + " " + good + args + ok.string() + " 2>&1");
    INFO(o.text);
    REQUIRE(o.code == 0);
    CHECK(o.text.find("dm_preact_resnet18, 10 classes, activation silu") != std::string::npos);
    CHECK(nn::read_metadata(ok.string()).at("arch") == "dm_preact_resnet18");
    fs::remove_all(dir);
}
