#pragma once
// Shared by the training-method tests: the tiny BN net of tools/make_method_twins.py, one SGD step the way the
// trainer takes it, and silencing the attacks' start lines.
#include <memory>
#include <ostream>

#include "attacks/attack.h"
#include "nn/layers.h"
#include "nn/optim.h"
#include "train/method.h"

namespace cw_train_test {

// conv1 3->4 (no bias), bn1, relu, conv2 4->6 stride 2 (+bias), bn2, relu, global average pool, fc 6->classes:
// the state_dict names of the PyTorch twin (nn.Sequential of an OrderedDict).
inline std::shared_ptr<cw::nn::Sequential> tiny_net(cw::Rng& rng, int classes = 3) {
    using namespace cw::nn;
    auto net = std::make_shared<Sequential>();
    net->add("conv1", std::make_shared<Conv2d>(3, 4, 3, 1, 1, false, rng));
    net->add("bn1", std::make_shared<BatchNorm2d>(4));
    net->add("relu1", std::make_shared<ReLU>());
    net->add("conv2", std::make_shared<Conv2d>(4, 6, 3, 2, 1, true, rng));
    net->add("bn2", std::make_shared<BatchNorm2d>(6));
    net->add("relu2", std::make_shared<ReLU>());
    net->add("pool", std::make_shared<GlobalAvgPool>());
    net->add("fc", std::make_shared<Linear>(6, classes, true, rng));
    return net;
}

// One optimiser step as the trainer takes it: loss = Σ per_sample, backward, step, then the clean forward the
// method asks for (PGD-AT: train mode, so the running statistics see the clean batch).
inline cw::train::BatchLoss sgd_step(cw::train::Method& method, cw::nn::Module& model, cw::nn::Optimizer& opt,
                                     const cw::Tensor& x, const cw::Tensor& y, const std::vector<int32_t>& host_y,
                                     int64_t epoch, int64_t batch, int classes, cw::Rng& rng) {
    model.train();
    opt.zero_grad();
    cw::train::BatchInput in{model, x, y, host_y, epoch, batch, classes, rng};
    cw::train::BatchLoss out = method.batch_loss(in);
    cw::sum(out.per_sample).backward();
    opt.step();
    const cw::train::CleanForward clean = method.clean_forward_after_step();
    if (clean != cw::train::CleanForward::Off) {
        model.train(clean == cw::train::CleanForward::Train);
        cw::NoGradGuard no_grad;
        model(x);
        model.train();
    }
    return out;
}

// Keeps the attacks' one-line announcements out of the test output for the scope's lifetime.
struct QuietAttacks {
    std::ostream* prev = cw::attacks::default_attack_log();
    QuietAttacks() { cw::attacks::default_attack_log() = nullptr; }
    ~QuietAttacks() { cw::attacks::default_attack_log() = prev; }
};

}  // namespace cw_train_test
