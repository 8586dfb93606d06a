// The model zoo against its PyTorch twins: parameter counts, state-dict keys and shapes, output shapes at
// every supported input size, in-model normalisation, and the registry.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "nn/model_registry.h"
#include "nn/models/classifier.h"
#include "tests/test_nn_util.h"

using namespace cw;
using namespace cw_nn_test;

namespace {

nn::ModelConfig config(int64_t classes, int64_t channels, int64_t size) {
    nn::ModelConfig c;
    c.num_classes = classes;
    c.in_channels = channels;
    c.input_size = size;
    return c;
}

std::string shape_list(const Shape& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
    return out + "]";
}

}  // namespace

// Expected counts: printed by `/usr/bin/python3 tools/pytorch_models.py counts` (torch 1.13, Debian's
// python3-torch) from PyTorch definitions written after the public sources named in each nn/models/*.h. Known
// published values agree: PreAct ResNet-18 11,172,170; ResNet-18 11,173,962; WRN-34-10 46,160,474;
// WRN-28-10 36,479,194; DenseNet-121 (kuangliu) 6,956,298; GoogLeNet (kuangliu) 6,166,250.
TEST_CASE("models: parameter counts equal PyTorch's", "[nn]") {
    struct Row {
        const char* arch;
        int64_t classes, channels, size;
        int64_t params;
        bool preact_final_bn = true, wrn_sub_block1 = false;
    };
    const Row rows[] = {
        {"lenet5", 10, 1, 28, 61706},           {"lenet5", 10, 3, 32, 62006},
        {"small_cnn", 10, 1, 28, 312202},       {"mnist_wong", 10, 1, 28, 166406},
        {"gtsrb_cnn", 43, 3, 32, 593131},       {"gtsrb_cnn", 17, 3, 32, 380113},
        {"vgg16", 10, 3, 32, 14728266},         {"vgg19", 100, 3, 32, 20086692},
        {"resnet18", 10, 3, 32, 11173962},      {"resnet34", 10, 3, 32, 21282122},
        {"resnet50", 10, 3, 32, 23520842},      {"resnet18", 200, 3, 64, 11271432},
        {"preact_resnet18", 10, 3, 32, 11172170}, {"preact_resnet18", 100, 3, 32, 11218340},
        {"preact_resnet18", 10, 3, 32, 11171146, false}, {"preact_resnet18", 10, 1, 28, 11171018},
        {"wrn28_10", 10, 3, 32, 36479194},      {"wrn34_10", 10, 3, 32, 46160474},
        {"wrn34_10", 10, 3, 32, 48262586, true, true},
        // wrnD_W by name, counted by hand: WRN-16-1 = conv1 432 + block1 2 x 4,672 + block2 14,432 + 18,560 +
        // block3 57,536 + 73,984 + bn 128 + fc 650; WRN-10-2 = 432 + 14,432 + 57,536 + 229,760 + 256 + 1,290.
        {"wrn16_1", 10, 3, 32, 175066},         {"wrn10_2", 10, 3, 32, 303706},
        {"densenet121", 10, 3, 32, 6956298},    {"densenet169", 10, 3, 32, 12493322},
        {"googlenet", 10, 3, 32, 6166250},
    };
    for (const Row& r : rows) {
        auto cfg = config(r.classes, r.channels, r.size);
        cfg.preact_final_bn = r.preact_final_bn;
        cfg.wrn_sub_block1 = r.wrn_sub_block1;
        INFO(r.arch << " classes " << r.classes << " channels " << r.channels << " size " << r.size);
        CHECK(nn::make_model(r.arch, cfg)->num_parameters() == r.params);
    }
}

TEST_CASE("models: state-dict keys and shapes equal PyTorch's, in order", "[nn]") {
    for (const std::string& arch : nn::model_names()) {
        INFO("arch " << arch);
        const std::string path = fixture_path("keys_" + arch + ".txt");
        REQUIRE(!path.empty());
        std::ifstream in(path);
        std::string header;
        std::getline(in, header);  // "# arch num_classes=C in_channels=K input_size=S (...)"
        int64_t classes = 0, channels = 0, size = 0;
        REQUIRE(std::sscanf(header.c_str(), "# %*s num_classes=%ld in_channels=%ld input_size=%ld", &classes, &channels,
                            &size) == 3);
        auto model = nn::make_model(arch, config(classes, channels, size));
        std::vector<std::string> want, got;
        for (std::string line; std::getline(in, line);) want.push_back(line);
        for (const auto& e : model->state()) got.push_back(e.name + " " + shape_list(e.tensor->shape()));
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < got.size(); ++i) {
            INFO("entry " << i);
            REQUIRE(got[i] == want[i]);
        }
    }
    // The PreAct shortcut variant changes the wiring, not the keys.
    auto cfg = config(10, 3, 32);
    cfg.preact_shortcut = nn::PreActShortcut::FromInput;
    auto from_input = nn::make_model("preact_resnet18", cfg), from_activation = nn::make_model("preact_resnet18");
    auto a = from_input->state(), b = from_activation->state();
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) REQUIRE(a[i].name == b[i].name);
}

TEST_CASE("models: logits are [N, C] at input sizes 28, 32 and 64", "[nn]") {
    NoGradGuard no_grad;
    // Expensive architectures run once at batch 1 on the smallest input; the rest at every size, batch 2.
    const std::set<std::string> heavy = {"wrn28_10", "wrn34_10", "vgg19", "resnet34", "resnet50", "densenet169"};
    for (const std::string& arch : nn::model_names()) {
        const bool mnist_net = arch == "small_cnn" || arch == "mnist_wong" || arch == "lenet5";
        const std::vector<int64_t> sizes = heavy.count(arch) ? std::vector<int64_t>{28} : std::vector<int64_t>{28, 32, 64};
        for (int64_t size : sizes) {
            INFO(arch << " at " << size);
            const int64_t channels = mnist_net ? 1 : 3, batch = heavy.count(arch) ? 1 : 2;
            auto model = nn::make_model(arch, config(7, channels, size));
            model->eval();
            Tensor y = model->forward(cw_test::randn({batch, channels, size, size}, 3, 1.f, false));
            REQUIRE(y.shape() == Shape{batch, 7});
            for (float v : y.to_vector()) REQUIRE(std::isfinite(v));
        }
    }
}

TEST_CASE("models: normalisation is the first op and adds no state", "[nn]") {
    auto cfg = config(10, 3, 32);
    auto plain = nn::make_model("resnet18", cfg);
    cfg.normalize_mean = {0.4914f, 0.4822f, 0.4465f};
    cfg.normalize_std = {0.2471f, 0.2435f, 0.2616f};
    auto normalized = nn::make_model("resnet18", cfg);
    REQUIRE(normalized->state().size() == plain->state().size());
    normalized->copy_state_from(*plain);
    plain->eval();
    normalized->eval();
    NoGradGuard no_grad;
    Tensor x = cw_test::randn({2, 3, 32, 32}, 5, 1.f, false);
    Tensor mean = Tensor::from_vector(cfg.normalize_mean, {1, 3, 1, 1});
    Tensor std = Tensor::from_vector(cfg.normalize_std, {1, 3, 1, 1});
    cw_test::require_close(normalized->forward(x).to_vector(), plain->forward(div(sub(x, mean), std)).to_vector(), 1e-4);

    auto* classifier = dynamic_cast<nn::Classifier*>(normalized.get());
    REQUIRE(classifier);
    REQUIRE(classifier->normalization());
    REQUIRE(classifier->normalization()->std_values == cfg.normalize_std);
}

TEST_CASE("models: registry names, unknown names and bad configurations", "[nn]") {
    const auto names = nn::model_names();
    REQUIRE(names.size() == 17);
    const std::string msg = error_of<Error>([] { nn::make_model("resnet19"); });
    REQUIRE_THAT(msg, Catch::Matchers::Contains("resnet19") && Catch::Matchers::Contains("preact_resnet18") &&
                          Catch::Matchers::Contains("googlenet"));
    auto cfg = config(10, 3, 32);
    cfg.normalize_mean = {0.5f};
    cfg.normalize_std = {0.5f};
    REQUIRE_THAT(error_of<Error>([&] { nn::make_model("vgg16", cfg); }), Catch::Matchers::Contains("3 input channels"));
    REQUIRE_THAT(error_of<Error>([] { nn::make_model("small_cnn", config(10, 1, 8)); }),
                 Catch::Matchers::Contains("too small"));
}

TEST_CASE("models: configuration round-trips through checkpoint metadata", "[nn]") {
    nn::ModelConfig cfg = config(100, 3, 64);
    cfg.normalize_mean = {0.5071f, 0.4867f, 0.4408f};
    cfg.normalize_std = {0.2675f, 0.2565f, 0.2761f};
    cfg.preact_shortcut = nn::PreActShortcut::FromInput;
    cfg.preact_final_bn = false;
    const auto meta = nn::model_metadata("preact_resnet18", cfg);
    REQUIRE(meta.at("normalize_mean") == "0.507099986,0.486699998,0.440800011");
    const auto spec = nn::model_spec_from_metadata(meta);
    REQUIRE(spec.arch == "preact_resnet18");
    REQUIRE(spec.config.num_classes == 100);
    REQUIRE(spec.config.input_size == 64);
    REQUIRE(spec.config.normalize_mean == cfg.normalize_mean);  // exact: 9 significant digits
    REQUIRE(spec.config.normalize_std == cfg.normalize_std);
    REQUIRE(spec.config.preact_shortcut == nn::PreActShortcut::FromInput);
    REQUIRE(!spec.config.preact_final_bn);

    // Only arch and num_classes are required; the rest defaults.
    const auto minimal = nn::model_spec_from_metadata({{"arch", "resnet18"}, {"num_classes", "10"}});
    REQUIRE(minimal.config.normalize_mean.empty());
    REQUIRE(minimal.config.input_size == 32);
    REQUIRE_THAT(error_of<Error>([] { nn::model_spec_from_metadata({{"arch", "resnet18"}}); }),
                 Catch::Matchers::Contains("num_classes"));
    REQUIRE_THAT(error_of<Error>([] { nn::model_spec_from_metadata({{"arch", "x"}, {"num_classes", "ten"}}); }),
                 Catch::Matchers::Contains("num_classes = 'ten'"));
}

TEST_CASE("models: TRADES SmallCNN starts with a zero last layer; WRN linear bias starts at zero", "[nn]") {
    auto small = nn::make_model("small_cnn", config(10, 1, 28));
    for (const auto& p : small->named_parameters())
        if (p.name.rfind("classifier.fc3.", 0) == 0)
            for (float v : p.tensor->to_vector()) REQUIRE(v == 0.f);
    // conv weights of SmallCNN: Kaiming normal, std sqrt(2 / (32*9)) for conv2
    for (const auto& p : small->named_parameters()) {
        if (p.name != "feature_extractor.conv2.weight") continue;
        double ss = 0;
        for (float v : p.tensor->to_vector()) ss += double(v) * v;
        const double std = std::sqrt(ss / p.tensor->numel());
        REQUIRE(std == Approx(std::sqrt(2.0 / (32 * 9))).epsilon(0.05));
    }

    // WRN-28-10 (the reference's init): fc.bias zero, fc.weight PyTorch's Linear default U(±1/sqrt(640)), conv
    // weights Kaiming normal with fan_out, BN at (1, 0).
    auto wrn = nn::make_model("wrn28_10", config(10, 3, 32));
    bool saw_bias = false, saw_weight = false, saw_conv = false;
    for (const auto& p : wrn->named_parameters()) {
        INFO(p.name);
        const std::vector<float> v = p.tensor->to_vector();
        if (p.name == "fc.bias") {
            saw_bias = true;
            REQUIRE(v.size() == 10);
            for (float b : v) REQUIRE(b == 0.f);
        } else if (p.name == "fc.weight") {
            saw_weight = true;
            const float bound = 1.f / std::sqrt(640.f);
            double ss = 0;
            for (float w : v) {
                REQUIRE(std::fabs(w) <= bound);
                ss += double(w) * w;
            }
            REQUIRE(std::sqrt(ss / v.size()) == Approx(bound / std::sqrt(3.0)).epsilon(0.05));   // not zeroed too
        } else if (p.name == "block2.layer.0.conv1.weight") {   // [320, 160, 3, 3]: fan_out = 320·9
            saw_conv = true;
            double ss = 0;
            for (float w : v) ss += double(w) * w;
            REQUIRE(std::sqrt(ss / v.size()) == Approx(std::sqrt(2.0 / (320 * 9))).epsilon(0.02));
        } else if (p.name.find("bn") != std::string::npos) {
            const float want = p.name.size() > 7 && p.name.compare(p.name.size() - 7, 7, ".weight") == 0 ? 1.f : 0.f;
            for (float b : v) REQUIRE(b == want);
        }
    }
    REQUIRE(saw_bias);
    REQUIRE(saw_weight);
    REQUIRE(saw_conv);
}

TEST_CASE("models: any WideResNet by name, wrnD_W, and one line for a depth or width it cannot build", "[nn]") {
    // The generic name builds the same network as the table's entry.
    CHECK(nn::make_model("wrn28_10", config(10, 3, 32))->num_parameters() ==
          nn::make_model("wrn28_010", config(10, 3, 32))->num_parameters());
    auto message = [](const std::string& arch) {
        try {
            nn::make_model(arch, config(10, 3, 32));
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string rule = "': a WideResNet needs depth 6n+4 in [10, 1000] and widen factor in [1, 64] (e.g. wrn28_10)";
    CHECK(message("wrn17_2") == "model architecture 'wrn17_2" + rule);
    CHECK(message("wrn16_0") == "model architecture 'wrn16_0" + rule);
    CHECK(message("wrn4_1") == "model architecture 'wrn4_1" + rule);
    CHECK(nn::is_model_name("wrn16_1"));
    CHECK(nn::is_model_name("preact_resnet18"));
    CHECK_FALSE(nn::is_model_name("wrn17_2"));
    CHECK_FALSE(nn::is_model_name("wrn16"));
    // Not of the shape at all: the unknown-architecture error, which lists the generic form.
    CHECK(message("wrn16").rfind("unknown model architecture 'wrn16'; known: lenet5,", 0) == 0);
    CHECK(message("wrn16").find("wrnD_W (any WideResNet") != std::string::npos);
}
