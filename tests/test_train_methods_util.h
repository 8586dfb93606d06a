#pragma once
// Shared by the training-method tests: the tiny BN net of tools/make_method_twins.py, one SGD step the way the
// trainer takes it, and silencing the attacks' start lines.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "datasets/dataset.h"
#include "engine/ops.h"
#include "engine/rng.h"
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

// Three classes of 3×8×8 images in [0, 1]: channel k brighter for class k, plus uniform noise (the "loss goes down"
// problem of every method test).
inline void blobs(int64_t n, cw::Rng& rng, std::vector<float>& x, std::vector<int32_t>& y) {
    for (int64_t i = 0; i < n; ++i) {
        const int k = static_cast<int>(i % 3);
        y.push_back(k);
        for (int c = 0; c < 3; ++c)
            for (int p = 0; p < 64; ++p) x.push_back(0.3f + (c == k ? 0.4f : 0.f) + rng.uniform(-0.1f, 0.1f));
    }
}

// The method tests' "loss goes down" run: `epochs` epochs of `method` on blobs (xv, yv: 48 images) in three
// batches of 16, SGD lr 0.05 from `net`'s weights, attack Rng 11. `check(out, y, labels)` sees every batch; with
// `end_epochs` the method's end_epoch gets each epoch's class statistics. Returns the mean batch loss per epoch.
using BatchCheck = std::function<void(const cw::train::BatchLoss&, const cw::Tensor&, const std::vector<int32_t>&)>;
inline std::vector<double> train_on_blobs(cw::train::Method& method, cw::nn::Module& net, const std::vector<float>& xv,
                                          const std::vector<int32_t>& yv, const BatchCheck& check, bool end_epochs,
                                          int64_t epochs = 6) {
    cw::nn::SgdOptions so;
    so.lr = 0.05f;
    cw::nn::SGD opt(net.parameters(), so);
    cw::Rng rng(11);
    std::vector<double> epoch_loss;
    for (int64_t e = 0; e < epochs; ++e) {
        double total = 0;
        cw::train::ClassStats stats(3);
        for (int64_t b = 0; b < 3; ++b) {
            const std::vector<float> bx(xv.begin() + b * 16 * 192, xv.begin() + (b + 1) * 16 * 192);
            const std::vector<int32_t> by(yv.begin() + b * 16, yv.begin() + (b + 1) * 16);
            const cw::Tensor x = cw::Tensor::from_vector(bx, {16, 3, 8, 8}), y = cw::Tensor::from_labels(by);
            const cw::train::BatchLoss out = sgd_step(method, net, opt, x, y, by, e, b, 3, rng);
            if (check) check(out, y, by);
            total += cw::sum(out.per_sample).item();
            if (end_epochs) stats.add(by, cw::argmax(out.logits, 1).to_int_vector(), out.per_sample.to_vector());
        }
        if (end_epochs) method.end_epoch(cw::train::EpochEnd{e, stats, net});
        epoch_loss.push_back(total / 3);
    }
    return epoch_loss;
}

// 3 classes of 1×6×6 images: a bright band in a class-specific row range, plus noise — the trainer tests' dataset.
inline std::shared_ptr<cw::data::Dataset> band_dataset(int64_t n, uint64_t seed) {
    auto d = std::make_shared<cw::data::Dataset>();
    d->name = "toy/train";
    d->channels = 1;
    d->height = d->width = 6;
    d->class_names = {"top", "middle", "bottom"};
    cw::Rng rng(seed);
    for (int64_t i = 0; i < n; ++i) {
        const int y = static_cast<int>(i % 3);
        d->labels.push_back(y);
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c) {
                const float base = (r / 2 == y) ? 180.f : 60.f;
                d->pixels.push_back(static_cast<uint8_t>(std::clamp(base + 90.f * rng.normal(), 0.f, 255.f)));
            }
    }
    return d;
}

// conv → BN (train-mode statistics couple the samples) → ReLU → flatten → linear, for band_dataset's images.
inline std::shared_ptr<cw::nn::Module> band_model() {
    auto m = std::make_shared<cw::nn::Sequential>();
    m->add(std::make_shared<cw::nn::Conv2d>(1, 4, 3, 1, 1));
    m->add(std::make_shared<cw::nn::BatchNorm2d>(4));
    m->add(std::make_shared<cw::nn::ReLU>());
    m->add(std::make_shared<cw::nn::Flatten>());
    m->add(std::make_shared<cw::nn::Linear>(4 * 36, 3));
    return m;
}

inline std::string file_text(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The last `n` numbers of history.csv's row "<epoch>,<eval>,..." (the per-class values of a method's state).
inline std::vector<double> history_row(const std::string& history, int epoch, const std::string& eval, int n) {
    std::stringstream in(history);
    std::string line;
    const std::string key = std::to_string(epoch) + "," + eval + ",";
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) != 0) continue;
        std::vector<std::string> cells;
        std::stringstream row(line);
        for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
        if (cells.size() < static_cast<size_t>(n)) FAIL("history.csv row " << key << " has fewer than " << n << " cells");
        std::vector<double> v;
        for (size_t i = cells.size() - static_cast<size_t>(n); i < cells.size(); ++i) v.push_back(std::stod(cells[i]));
        return v;
    }
    FAIL("no history.csv row " << key);
    return {};
}

}  // namespace cw_train_test
