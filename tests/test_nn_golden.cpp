// PreAct ResNet-18 against PyTorch: weights and inputs from closed-form formulas evaluated identically on both
// sides (double-precision sin, one rounding to float32), outputs from tools/make_golden_preact.py (torch 1.13)
// stored in tests/fixtures/golden_preact18.txt. Covers the whole forward (stem, blocks, shortcuts, final
// BN + ReLU, pooling, linear) in eval mode, the input gradient of the mean cross-entropy, train-mode BN (batch
// statistics) and the running-variance update (unbiased variance, momentum 0.1).
//
// Tolerance: both sides compute in float32 with different summation orders (OpenBLAS im2col GEMM vs PyTorch's
// CPU convolution). A dot product of length K <= 4608 carries a relative rounding error of order
// sqrt(K) * 6e-8 ~ 4e-6; over the ~20 layers these add up to ~1e-5 of the tensor's scale. Eval-mode BN is
// affine (no amplification), so 1e-4 times the largest magnitude of each tensor leaves a 10x margin, while
// any wiring difference (shortcut source, missing ReLU, wrong pooling, BN statistic) changes outputs by O(1).
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "nn/model_registry.h"
#include "tests/skip.h"
#include "tests/test_nn_util.h"

using namespace cw;

namespace {

double formula(const std::string& name, const Shape& shape, int64_t k, int64_t i) {
    const double s = std::sin(0.37 * static_cast<double>(i) + static_cast<double>(k));
    if (name == "linear.weight") return 1.0 / std::sqrt(static_cast<double>(shape[1])) * s;
    if (name == "linear.bias") return 0.1 * s;
    if (shape.size() == 4) return 2.0 / std::sqrt(static_cast<double>(shape[1] * shape[2] * shape[3])) * s;
    const auto ends_with = [&](const std::string& suffix) {
        return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with("running_mean") || ends_with(".bias")) return 0.1 * s;
    if (ends_with("running_var")) return 1.0 + 0.5 * s * s;
    return 1.0 + 0.2 * s;  // BN weight
}

void set_formula_weights(nn::Module& model) {
    int64_t k = 0;
    for (auto& e : model.state()) {
        if (e.tensor->dtype() == DType::I32) {
            e.tensor->copy_from(Tensor::from_ints({static_cast<int32_t>(k)}, {}));
        } else {
            std::vector<float> v(static_cast<size_t>(e.tensor->numel()));
            for (size_t i = 0; i < v.size(); ++i)
                v[i] = static_cast<float>(formula(e.name, e.tensor->shape(), k, static_cast<int64_t>(i)));
            e.tensor->copy_from(Tensor::from_vector(v, e.tensor->shape()));
        }
        ++k;
    }
}

Tensor formula_input(int64_t batch) {
    const int64_t per = 3 * 32 * 32;
    std::vector<float> v(static_cast<size_t>(batch * per));
    for (int64_t n = 0; n < batch; ++n)
        for (int64_t j = 0; j < per; ++j)
            v[static_cast<size_t>(n * per + j)] =
                static_cast<float>(0.5 + 0.45 * std::sin(0.05 * static_cast<double>(j) + 0.7 * static_cast<double>(n)));
    return Tensor::from_vector(v, {batch, 3, 32, 32});
}

std::map<std::string, std::vector<float>> read_golden(const std::string& path) {
    std::map<std::string, std::vector<float>> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ss(line);
        std::string name;
        size_t count = 0;
        ss >> name >> count;
        std::vector<float> v(count);
        for (auto& x : v) ss >> x;
        REQUIRE(ss);
        out[name] = v;
    }
    return out;
}

void require_close_to_scale(const std::string& what, const std::vector<float>& got, const std::vector<float>& want,
                            double rel = 1e-4) {
    REQUIRE(got.size() == want.size());
    double scale = 0, worst = 0;
    for (float w : want) scale = std::max(scale, std::fabs(static_cast<double>(w)));
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
    INFO(what << ": max |difference| " << worst << ", largest |value| " << scale << ", relative " << worst / scale);
    REQUIRE(worst <= rel * scale);
}

}  // namespace

TEST_CASE("golden: PreAct ResNet-18 logits, input gradient and train-mode BN match PyTorch", "[nn][golden]") {
    const std::string path = cw_nn_test::fixture_path("golden_preact18.txt");
    if (path.empty()) CW_SKIP("tests/fixtures/golden_preact18.txt missing (make it with tools/make_golden_preact.py)");
    const auto golden = read_golden(path);

    auto model = nn::make_model("preact_resnet18");
    set_formula_weights(*model);
    const std::vector<int32_t> labels = {3, 8};
    Tensor x = formula_input(2).set_requires_grad(true);

    model->eval();
    Tensor logits = model->forward(x);
    Tensor loss = cross_entropy(logits, Tensor::from_labels(labels));
    loss.backward();
    require_close_to_scale("eval logits", logits.to_vector(), golden.at("logits_eval"));
    require_close_to_scale("loss", loss.to_vector(), golden.at("loss_eval"));
    require_close_to_scale("input gradient", x.grad().to_vector(), golden.at("input_grad_eval"));

    model->train();
    {
        NoGradGuard ng;
        require_close_to_scale("train logits", model->forward(x).to_vector(), golden.at("logits_train"));
    }
    std::vector<float> running_var;
    for (auto& e : model->state())
        if (e.name == "bn.running_var") running_var = e.tensor->to_vector();
    require_close_to_scale("final BN running_var", running_var, golden.at("final_bn_running_var_after_train"));
}
