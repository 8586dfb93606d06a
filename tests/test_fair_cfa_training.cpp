// CFA and FAIR-TAT in training: a few epochs on separable blobs lower the loss with the class-wise values active
// (their end_epoch fed from the logits they trained on), and a run through train::Trainer writes state_* rows
// into history.csv that leave ε once the calibration begins.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "datasets/loader.h"
#include "engine/ops.h"
#include "fairness/methods/cfa.h"
#include "tests/test_nn_util.h"
#include "tests/test_band_trainer.h"
#include "tests/test_train_methods_util.h"
#include "jobs/registry.h"
#include "train/trainer.h"

using namespace cw;
using namespace cw::train;
using cw_train_test::history_row;

TEST_CASE("cfa and fair_tat: a few epochs on separable blobs lower the loss with class-wise values active", "[fair]") {
    cw_train_test::QuietAttacks quiet;
    Rng data(9);
    std::vector<float> xv;
    std::vector<int32_t> yv;
    cw_train_test::blobs(48, data, xv, yv);
    for (const std::string name : {"cfa_at", "cfa_trades", "cfa_fat", "fair_tat", "fair_tat_trades", "fair_tat_fat"}) {
        DYNAMIC_SECTION(name) {
            MethodOptions o;
            o.eps = 8.f / 255;
            o.steps = 3;
            o.cfa.begin = 1;
            MethodPtr method = make_method(name, o);
            Rng init(10);
            auto net = cw_train_test::tiny_net(init);
            const std::vector<double> epoch_loss = cw_train_test::train_on_blobs(*method, *net, xv, yv,
                [&](const BatchLoss& out, const Tensor& y, const std::vector<int32_t>&) {
                    REQUIRE(out.per_sample.shape() == Shape{16});
                    if (name != "cfa_trades" && name != "fair_tat_trades")   // the CE methods: the terms are the mean CE of the logits reported
                        REQUIRE(sum(out.per_sample).item() == Approx(cross_entropy(out.logits, y).item()).epsilon(1e-5));
                }, true);
            // The calibration ran: ε_k moved off ε (t_k ≠ 1 − λ on this problem).
            const auto state = method->class_state();
            const std::vector<double> eps(3, static_cast<double>(8.f / 255));
            INFO(name << ": mean loss per epoch " << epoch_loss.front() << " ... " << epoch_loss.back());
            CHECK(state[0] != eps);
            REQUIRE(epoch_loss.back() < 0.7 * epoch_loss.front());
        }
    }
}

namespace {
constexpr int kClasses = 3;
}  // namespace

// One toy training run of `name` through train::Trainer (3 epochs of 6 steps; class-wise values from epoch 2).
cw_train_test::BandRun run_trainer(const std::string& name, const std::string& out, int64_t interrupt_after = -1,
                                   bool resume = false) {
    return cw_train_test::run_band_trainer(name, out, [&](MethodOptions& o, TrainerConfig& config) {
        o.cfa.begin = 2;       // epoch 0 and 1 at ε, epoch 2 calibrated from epoch 1
        o.cfa.tat_begin = 2;
        config.recipe.schedule = "cosine";
        config.interrupt_after_steps = interrupt_after;
        config.resume = resume;
    });
}
using cw_train_test::parameter_values;

TEST_CASE("cfa_at and fair_tat through train::Trainer: history.csv state rows are eps before begin, calibrated after",
          "[fair]") {
    cw_train_test::QuietAttacks quiet;
    for (const std::string name : {"cfa_at", "fair_tat"}) {
        DYNAMIC_SECTION(name) {
            cw_nn_test::ScratchDir dir;
            run_trainer(name, dir.path.string());
            const std::string history = cw_train_test::file_text(dir.path / "history.csv");
            INFO(history);
            // history.csv epochs are 1-based: the row of epoch E holds the state after E epochs, i.e. what epoch E
            // (0-based) uses. Epochs 0 and 1 use ε; epoch 2 uses (λ + t_k)·ε from epoch 1.
            // (history.csv rounds its numbers: compare with a tolerance, never with ==.)
            auto largest_gap = [](const std::vector<double>& row, double v) {
                double gap = 0;
                for (double x : row) gap = std::max(gap, std::abs(x - v));
                return gap;
            };
            CHECK(largest_gap(history_row(history, 1, "state_eps", 3), 0.15) < 1e-5);
            CHECK(largest_gap(history_row(history, 2, "state_eps", 3), 0.15) > 1e-3);
            CHECK(largest_gap(history_row(history, 3, "state_eps", 3), 0.15) > 1e-3);
            if (name == "fair_tat") {
                CHECK(largest_gap(history_row(history, 1, "state_target_prob", 3), 1.0 / 3) < 1e-5);
                CHECK(largest_gap(history_row(history, 2, "state_target_prob", 3), 1.0 / 3) > 1e-3);
            } else {
                CHECK(largest_gap(history_row(history, 1, "state_t", 3), 0.0) > 0.1);
            }
        }
    }
}

TEST_CASE("cfa_trades and fair_tat: a run interrupted after the calibration and resumed ends bit-identical", "[fair]") {
    cw_train_test::QuietAttacks quiet;
    for (const std::string name : {"cfa_trades", "fair_tat"}) {
        DYNAMIC_SECTION(name) {
            cw_nn_test::ScratchDir straight_dir, cut_dir;
            cw_train_test::BandRun straight = run_trainer(name, straight_dir.path.string());
            REQUIRE(straight.result.steps == 18);
            // Step 14: epoch 2, batch 2 — after the class-wise values changed at the end of epoch 1.
            REQUIRE(run_trainer(name, cut_dir.path.string(), 14).result.interrupted);
            cw_train_test::BandRun rest = run_trainer(name, cut_dir.path.string(), -1, true);
            REQUIRE(rest.result.steps == 18);
            CHECK(rest.method->class_state() == straight.method->class_state());
            CHECK(parameter_values(*rest.model) == parameter_values(*straight.model));
        }
    }
}

namespace {
// Passes through to a tiny net and keeps the last input it saw: every method's last forward is the one on x_adv.
class LastInput : public nn::Module {
public:
    explicit LastInput(std::shared_ptr<nn::Module> inner) : nn::Module("LastInput"), inner_(register_module("net", inner)) {}
    Tensor forward(const Tensor& x) override {
        last = x.detach().clone();
        return (*inner_)(x);
    }
    Tensor last;
private:
    std::shared_ptr<nn::Module> inner_;
};
}  // namespace

TEST_CASE("cfa and fair_tat: every sample's attack stays in its class's eps_k-ball, and the wide classes use it",
          "[fair]") {
    cw_train_test::QuietAttacks quiet;
    Rng data(21);
    std::vector<float> xv;
    std::vector<int32_t> yv;
    cw_train_test::blobs(24, data, xv, yv);
    const Tensor x = Tensor::from_vector(xv, {24, 3, 8, 8}), y = Tensor::from_labels(yv);
    // t = (1, 0.5, 0) (balanced, code form): ε_k = (0.5 + t_k)·ε = (1.5, 1, 0.5)·ε with λ = 0.5.
    ClassStats stats(3);
    stats.add({0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}, {0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1}, {});
    const float eps = 8.f / 255;
    const std::vector<float> ball{1.5f * eps, eps, 0.5f * eps};
    for (const std::string name : {"cfa_at", "cfa_trades", "cfa_fat", "fair_tat", "fair_tat_trades", "fair_tat_fat"}) {
        DYNAMIC_SECTION(name) {
            MethodOptions o;
            o.eps = eps;
            o.steps = 4;
            o.alpha = 6.f / 255;
            o.cfa.begin = 0;
            o.cfa.lambda_eps = 0.5f;
            MethodPtr method = make_method(name, o);
            Rng init(22), rng(23);
            LastInput net(cw_train_test::tiny_net(init));
            net.train();
            // Epoch 0 learns the sizes (a first batch tells the method the number of classes).
            method->batch_loss(BatchInput{net, x, y, yv, 0, 0, 3, rng});
            method->end_epoch(EpochEnd{0, stats, net});
            method->batch_loss(BatchInput{net, x, y, yv, 1, 0, 3, rng});
            const auto adv = net.last.to_vector();
            std::vector<float> widest(3, 0.f);
            for (size_t i = 0; i < yv.size(); ++i) {
                float m = 0;
                for (size_t p = 0; p < 192; ++p) m = std::max(m, std::abs(adv[i * 192 + p] - xv[i * 192 + p]));
                const auto k = static_cast<size_t>(yv[i]);
                INFO("sample " << i << " class " << k << ": |x_adv - x|_inf " << m * 255 << "/255");
                CHECK(m <= ball[k] + 1e-6f);
                widest[k] = std::max(widest[k], m);
            }
            // Class 0's ball is wider than ε and its samples go beyond ε.
            CHECK(widest[0] > eps + 1e-4f);
        }
    }
}
