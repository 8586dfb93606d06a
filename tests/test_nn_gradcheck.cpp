// Module-level finite-difference checks: the wiring of each building block (shortcuts, concatenation order,
// pre-activation) gets the gradient of its input and of every parameter right. Train-mode BN, so gradients also
// flow through the batch statistics. Inputs are small ([2,4,4,4]) to keep the 2 forwards per element cheap.
//
// Finite differences are only valid away from kinks. Every ReLU here follows a BN, and in train mode a BN output
// is gamma * xhat + beta with |xhat| <= sqrt(N*H*W - 1) ~ 5.6 (here typically < 3): with gamma in [0.2, 0.4] and
// beta = +-3 no ReLU input comes near 0, so no perturbation crosses a kink (with default BN parameters about
// a quarter of the checks crossed one and failed by a few percent). Max-pool windows (inception) see inputs
// that are pairwise at least 0.03 apart, more than the 0.01 step, so their argmax never changes.
#include <set>

#include "nn/models/densenet.h"
#include "nn/models/dm_preact_resnet.h"
#include "nn/models/dm_wide_resnet.h"
#include "nn/models/googlenet.h"
#include "nn/models/preact_resnet.h"
#include "nn/models/resnet.h"
#include "nn/models/wide_resnet.h"
#include "tests/test_nn_util.h"

using namespace cw;

namespace {

// BN weight (gamma) in [0.2, 0.4], bias (beta) -3 on every third channel and +3 on the others: see the comment
// above. The closed channels keep ReLU gating part of the check; BNs of two channels stay fully open, because a
// conv fed by a single open channel makes the next BN's output depend on the sign of one weight (a jump at 0).
void keep_relus_off_their_kinks(nn::Module& m, uint64_t seed) {
    std::set<std::string> bn_prefixes;  // "bn1." for "bn1.running_mean": the BatchNorm modules
    for (const auto& b : m.named_buffers())
        if (b.name.size() > 12 && b.name.compare(b.name.size() - 12, 12, "running_mean") == 0)
            bn_prefixes.insert(b.name.substr(0, b.name.size() - 12));
    cw::Rng rng(seed);
    for (auto& e : m.named_parameters()) {
        const size_t dot = e.name.rfind('.') + 1;
        if (!bn_prefixes.count(e.name.substr(0, dot))) continue;
        std::vector<float> v(static_cast<size_t>(e.tensor->numel()));
        if (e.name.substr(dot) == "weight") rng.fill_uniform(v.data(), v.size(), 0.2f, 0.4f);
        else for (size_t c = 0; c < v.size(); ++c) v[c] = c % 3 == 2 ? -3.f : 3.f;
        e.tensor->copy_from(Tensor::from_vector(v, e.tensor->shape()));
    }
}

// Checks d(sum(block(x) * R)) / d(x, every parameter). The parameters are passed to the checker as extra inputs:
// they are the block's own tensors, so the checker's perturbations reach the block.
void require_module_gradcheck(nn::Module& block, const Shape& input_shape, uint64_t seed) {
    block.train();
    INFO("block " << block.type_name());
    keep_relus_off_their_kinks(block, seed);
    std::vector<Tensor> inputs = {cw_test::distinct_values(input_shape, seed, 0.03f)};
    for (Tensor* p : block.parameters()) inputs.push_back(*p);
    GradCheckOptions opt;
    opt.step = 3e-3;
    cw_test::require_gradcheck([&block](const std::vector<Tensor>& in) { return block.forward(in[0]); }, inputs, opt);
}

}  // namespace

TEST_CASE("module gradcheck: PreAct block, identity and projection shortcuts, both variants", "[nn][gradcheck]") {
    manual_seed(11);   // conv weights from the global stream: the same blocks whatever ran before
    for (auto variant : {nn::PreActShortcut::FromActivation, nn::PreActShortcut::FromInput}) {
        nn::PreActBlock same(4, 4, 1, variant);
        require_module_gradcheck(same, {2, 4, 4, 4}, 1);
        nn::PreActBlock down(4, 6, 2, variant);
        require_module_gradcheck(down, {2, 4, 4, 4}, 2);
    }
}

TEST_CASE("module gradcheck: DenseNet bottleneck (concat) and transition", "[nn][gradcheck]") {
    manual_seed(11);   // conv weights from the global stream: the same blocks whatever ran before
    nn::DenseBottleneck bottleneck(4, 2);  // 4 -> 4 + 2 channels, 8 in the middle
    require_module_gradcheck(bottleneck, {2, 4, 4, 4}, 3);
    nn::DenseTransition transition(4, 2);
    require_module_gradcheck(transition, {2, 4, 4, 4}, 4);
}

TEST_CASE("module gradcheck: ResNet basic and bottleneck blocks, WRN block, inception", "[nn][gradcheck]") {
    manual_seed(11);   // conv weights from the global stream: the same blocks whatever ran before
    nn::BasicBlock basic(4, 6, 2);
    require_module_gradcheck(basic, {2, 4, 4, 4}, 5);
    nn::Bottleneck bottleneck(4, 2, 1);  // 4 -> 8 channels: projection shortcut
    require_module_gradcheck(bottleneck, {2, 4, 4, 4}, 6);
    nn::WideBlock wide_same(4, 4, 1), wide_down(4, 6, 2);
    require_module_gradcheck(wide_same, {2, 4, 4, 4}, 7);
    require_module_gradcheck(wide_down, {2, 4, 4, 4}, 8);
    nn::Inception inception(4, 2, 2, 3, 2, 2, 2);
    require_module_gradcheck(inception, {2, 4, 4, 4}, 9);
}

TEST_CASE("module gradcheck: DeepMind WideResNet and PreAct blocks, SiLU and ReLU, padded below and right",
          "[nn][gradcheck]") {
    manual_seed(11);
    for (auto act : {nn::Activation::Silu, nn::Activation::Relu}) {
        INFO("activation " << nn::activation_name(act));
        nn::DMWideBlock same(4, 4, 1, act), down(4, 6, 2, act);
        require_module_gradcheck(same, {2, 4, 4, 4}, 21);
        require_module_gradcheck(down, {2, 4, 4, 4}, 22);
        nn::DMPreActBlock pre_same(4, 4, 1, act), pre_down(4, 6, 2, act);
        require_module_gradcheck(pre_same, {2, 4, 4, 4}, 23);
        require_module_gradcheck(pre_down, {2, 4, 4, 4}, 24);
    }
    // the pad itself: one zero row below, one zero column to the right, values in place
    Tensor x = Tensor::from_vector({1, 2, 3, 4}, {1, 1, 2, 2});
    CHECK(nn::pad_bottom_right(x).to_vector() == std::vector<float>{1, 2, 0, 3, 4, 0, 0, 0, 0});
    cw_test::require_gradcheck([](const std::vector<Tensor>& in) { return nn::pad_bottom_right(in[0]); },
                               {cw_test::randn({2, 3, 3, 2}, 25)});
}
