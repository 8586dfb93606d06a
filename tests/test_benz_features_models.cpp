// The representation accessor of the model zoo (nn::Classifier::features / head), which Ilyas et al.'s feature
// datasets match: it is the input of the final linear layer (the logits are exactly W·features + b with that
// layer's own weights), it goes through the same normalisation as forward(), its input gradient is right, and a
// model without an accessor says so by name.
#include <catch2/catch.hpp>

#include "engine/gradcheck.h"
#include "engine/ops.h"
#include "nn/model_registry.h"
#include "nn/models/classifier.h"
#include "tests/test_util.h"

using namespace cw;

namespace {

nn::ModelConfig config(int64_t channels, int64_t size) {
    nn::ModelConfig c;
    c.num_classes = 7;
    c.in_channels = channels;
    c.input_size = size;
    return c;
}

std::shared_ptr<nn::Classifier> classifier(const std::string& arch, const nn::ModelConfig& cfg) {
    auto c = std::dynamic_pointer_cast<nn::Classifier>(nn::make_model(arch, cfg));
    REQUIRE(c);
    c->eval();
    return c;
}

// Images in [0,1], like the construction's.
Tensor images(const Shape& s, uint64_t seed) {
    Tensor x = cw_test::randn(s, seed, 1.f, false);
    return clamp(add(mul(x, 0.25f), 0.5f), 0.f, 1.f);
}

}  // namespace

TEST_CASE("features: the logits are the last linear layer applied to features(x), for every zoo model with an accessor",
          "[benz_features][nn]") {
    NoGradGuard no_grad;
    // The representation's width: what the last linear layer takes (PyTorch's in_features).
    const std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>> cases = {
        {"small_cnn", 1, 28, 200}, {"lenet5", 1, 28, 84},         {"mnist_wong", 1, 28, 100},
        {"preact_resnet18", 3, 32, 512}, {"resnet18", 3, 32, 512}, {"wrn28_10", 3, 32, 640}};
    for (const auto& [arch, channels, size, width] : cases) {
        INFO(arch);
        const auto cfg = config(channels, size);
        auto m = classifier(arch, cfg);
        REQUIRE(m->has_features());
        const int64_t n = arch == "wrn28_10" ? 1 : 2;
        const Tensor x = images({n, channels, size, size}, 3);
        const Tensor h = m->features(x);
        REQUIRE(h.shape() == Shape{n, width});
        const Tensor logits = m->forward(x);
        cw_test::require_close(m->head(h).to_vector(), logits.to_vector(), 1e-5);
        // Independently of head(): the model's own last parameters are the final layer [7, width] and [7].
        const auto params = m->named_parameters();
        REQUIRE(params.size() >= 2);
        const auto& w = params[params.size() - 2];
        const auto& b = params[params.size() - 1];
        INFO(w.name << ", " << b.name);
        REQUIRE(w.tensor->shape() == Shape{7, width});
        REQUIRE(b.tensor->shape() == Shape{7});
        cw_test::require_close(linear(h, *w.tensor, *b.tensor).to_vector(), logits.to_vector(), 1e-4);
    }
}

TEST_CASE("features: the same normalisation path as forward()", "[benz_features][nn]") {
    NoGradGuard no_grad;
    auto cfg = config(3, 32);
    auto plain = classifier("preact_resnet18", cfg);
    cfg.normalize_mean = {0.4914f, 0.4822f, 0.4465f};
    cfg.normalize_std = {0.2471f, 0.2435f, 0.2616f};
    auto normalized = classifier("preact_resnet18", cfg);
    normalized->copy_state_from(*plain);
    const Tensor x = images({2, 3, 32, 32}, 5);
    const Tensor mean = Tensor::from_vector(cfg.normalize_mean, {1, 3, 1, 1});
    const Tensor std = Tensor::from_vector(cfg.normalize_std, {1, 3, 1, 1});
    const Tensor h = normalized->features(x);
    cw_test::require_close(h.to_vector(), plain->features(div(sub(x, mean), std)).to_vector(), 1e-4);
    cw_test::require_close(normalized->head(h).to_vector(), normalized->forward(x).to_vector(), 1e-5);
}

TEST_CASE("features: the input gradient of the representation passes a finite-difference check", "[benz_features][nn]") {
    // mnist_wong: convolutions, ReLUs and a linear layer (no max-pool), at 14x14 so the check is cheap. A few
    // pre-activations near a ReLU kink shift the central difference slightly; the tolerances absorb that.
    manual_seed(21);
    nn::ModelConfig cfg = config(1, 14);
    cfg.normalize_mean = {0.5f};
    cfg.normalize_std = {0.3f};
    auto m = classifier("mnist_wong", cfg);
    Tensor x = images({1, 1, 14, 14}, 8).detach().set_requires_grad(true);
    GradCheckOptions opt;
    opt.step = 1e-3;
    opt.rtol = 2e-2;
    opt.atol = 5e-3;
    cw_test::require_gradcheck([&m](const std::vector<Tensor>& in) { return m->features(in[0]); }, {x}, opt);
}

TEST_CASE("features: a model without an accessor is one error naming it", "[benz_features][nn]") {
    NoGradGuard no_grad;
    for (const std::string arch : {"gtsrb_cnn", "vgg16"}) {
        INFO(arch);
        auto m = classifier(arch, config(3, 32));
        CHECK_FALSE(m->has_features());
        const std::string what = cw_test::error_of<Error>([&] { m->features(images({1, 3, 32, 32}, 1)); });
        CHECK_THAT(what, Catch::Contains("no representation accessor"));
        CHECK_THAT(what, Catch::Contains(m->type_name()));
        CHECK(m->forward(images({1, 3, 32, 32}, 1)).shape() == Shape{1, 7});   // the logits still work
    }
}
