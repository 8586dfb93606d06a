// FAAL in training (fairness/methods/faal.h): one step against the PyTorch twin (tools/make_faal_twin.py →
// tests/fixtures/faal_twin.safetensors: loss, per-sample terms, class weights, every parameter's gradient, the state
// after two SGD steps), radius 0 as PGD-AT with an eval-mode attack, and runs through train::Trainer: the per-step
// weights in steps.csv, their epoch mean in history.csv, and a bit-identical resume.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <sstream>

#include "datasets/loader.h"
#include "engine/ops.h"
#include "fairness/methods/faal.h"
#include "nn/safetensors.h"
#include "tests/fixture_file.h"
#include "tests/test_nn_util.h"
#include "tests/test_band_trainer.h"
#include "tests/test_train_methods_util.h"
#include "jobs/registry.h"
#include "train/trainer.h"

using namespace cw;
using namespace cw::train;
using cw_nn_test::worst_error;

namespace {

const st::File& fixture() { return cw_nn_test::fixture_file("faal_twin.safetensors", "tools/make_faal_twin.py"); }

std::vector<float> twin(const std::string& name) { return cw_nn_test::fixture_f32(fixture(), "faal_twin.safetensors", name); }

std::vector<float> as_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

MethodOptions twin_options() {
    MethodOptions o;
    o.eps = 8.f / 255;
    o.alpha = 2.f / 255;
    o.steps = 5;
    return o;
}

}  // namespace

TEST_CASE("faal: loss, per-sample terms, class weights, gradients and two SGD steps match the PyTorch twin",
          "[fair][faal]") {
    cw_train_test::QuietAttacks quiet;
    const Tensor x = Tensor::from_vector(twin("x"), {8, 3, 8, 8});
    std::vector<int32_t> host_y;
    for (float v : twin("y")) host_y.push_back(static_cast<int32_t>(v));
    const Tensor y = Tensor::from_labels(host_y);
    for (const std::string name : {"faal", "faal_class", "faal_trades"}) {
        DYNAMIC_SECTION(name) {
            Rng init(1);
            auto net = cw_train_test::tiny_net(init);
            for (auto& e : net->state())
                if (e.tensor->dtype() == DType::F32) e.tensor->copy_from(Tensor::from_vector(twin("init." + e.name), e.tensor->shape()));
            MethodOptions o = twin_options();
            if (name == "faal_class") {
                o.faal.batch_counts = false;
                o.faal.radius = 2.0;
            }
            MethodPtr method = make_method(name == "faal_trades" ? "faal_trades" : "faal", o);
            nn::SgdOptions so;
            so.lr = 0.1f;
            nn::SGD opt(net->parameters(), so);
            Rng rng(1234);
            const std::vector<float> want_loss = twin(name + ".loss");
            for (int step = 0; step < 2; ++step) {
                // TRADES' attack at x' ≈ x flips a few sign decisions in float32 after the first step (see
                // test_train_methods.cpp): its second step is held to 2e-3, everything else to 1e-5.
                const double tol = name == "faal_trades" && step == 1 ? 2e-3 : 1e-5;
                net->train();
                opt.zero_grad();
                BatchInput in{*net, x, y, host_y, 0, step, 3, rng};
                const BatchLoss out = method->batch_loss(in);
                const Tensor loss = sum(out.per_sample);
                loss.backward();
                const std::string at = name + " step " + std::to_string(step);
                const double e_loss = std::fabs(loss.item() - want_loss[step]) / std::fabs(want_loss[step]);
                const double e_per = worst_error(out.per_sample.to_vector(), twin(name + ".per_sample" + std::to_string(step)));
                const double e_w = worst_error(as_float(method->class_state()[0]), twin(name + ".weight" + std::to_string(step)));
                INFO(at << ": loss " << loss.item() << " (twin " << want_loss[step] << ", error " << e_loss
                        << "), per-sample error " << e_per << ", weight error " << e_w);
                REQUIRE(e_loss <= (step == 0 ? 1e-5 : tol));
                REQUIRE(e_per <= tol);
                REQUIRE(e_w <= tol);
                if (step == 0) {
                    // Relative to the largest gradient entry of the whole model: conv2's bias feeds BN, so its
                    // gradient is 0 up to rounding and has no scale of its own.
                    double scale = 0;
                    for (const auto& [pname, p] : net->named_parameters())
                        for (float v : twin(name + ".grad0." + pname)) scale = std::max(scale, std::fabs(static_cast<double>(v)));
                    REQUIRE(scale > 0);
                    for (const auto& [pname, p] : net->named_parameters()) {
                        const std::vector<float> got = p->grad().to_vector(), want = twin(name + ".grad0." + pname);
                        REQUIRE(got.size() == want.size());
                        double e = 0;
                        for (size_t i = 0; i < got.size(); ++i) e = std::max(e, std::fabs(static_cast<double>(got[i]) - want[i]) / scale);
                        INFO(at << ": gradient of '" << pname << "', error " << e << " of the largest entry " << scale);
                        REQUIRE(e <= 1e-5);
                    }
                }
                opt.step();
                for (auto& e : net->state()) {
                    if (e.tensor->dtype() != DType::F32) continue;
                    const double err = worst_error(e.tensor->to_vector(), twin(name + ".after" + std::to_string(step) + "." + e.name));
                    INFO(at << ": '" << e.name << "' after the step, error " << err);
                    REQUIRE(err <= tol);
                }
            }
        }
    }
}

TEST_CASE("faal: radius 0 is PGD-AT with an eval-mode attack (uniform weights)", "[fair][faal]") {
    cw_train_test::QuietAttacks quiet;
    Rng data(9);
    std::vector<float> xv;
    std::vector<int32_t> yv;
    cw_train_test::blobs(16, data, xv, yv);
    const Tensor x = Tensor::from_vector(xv, {16, 3, 8, 8}), y = Tensor::from_labels(yv);
    MethodOptions o = twin_options();
    o.faal.radius = 0;
    MethodOptions at = twin_options();
    at.attack_mode = ModeChoice::Eval;
    // Two copies of one net: FAAL's train-mode forwards move the running statistics the other's eval-mode attack reads.
    Rng init_a(3), init_b(3);
    auto net_a = cw_train_test::tiny_net(init_a), net_b = cw_train_test::tiny_net(init_b);
    Rng r1(5), r2(5);
    MethodPtr faal = make_method("faal", o), pgd = make_method("pgd_at", at);
    net_a->train();
    net_b->train();
    const BatchLoss a = faal->batch_loss({*net_a, x, y, yv, 0, 0, 3, r1});
    const BatchLoss b = pgd->batch_loss({*net_b, x, y, yv, 0, 0, 3, r2});
    const std::vector<float> pa = a.per_sample.to_vector(), pb = b.per_sample.to_vector();
    REQUIRE(pa.size() == 16);
    REQUIRE(pb.size() == 16);
    for (size_t i = 0; i < pa.size(); ++i) CHECK(pa[i] == Approx(pb[i]).epsilon(1e-6));
    const auto state = faal->class_state();
    for (double w : state[0]) CHECK(w == Approx(1.0).epsilon(1e-15));
}

namespace {

// 2 epochs of 6 batches of 16 on the band data, every step audited into steps.csv.
cw_train_test::BandRun run_trainer(const std::string& name, const std::string& out, int64_t interrupt_after = -1,
                                   bool resume = false) {
    return cw_train_test::run_band_trainer(name, out, [&](MethodOptions& o, TrainerConfig& config) {
        o.faal.radius = 1.0;
        config.epochs = 2;
        config.recipe.schedule = "multistep";
        config.recipe.milestones = {1};
        config.audit_steps = 1;
        config.interrupt_after_steps = interrupt_after;
        config.resume = resume;
    });
}

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    std::string cell;
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    return cells;
}

using cw_train_test::history_row;
using cw_train_test::parameter_values;

}  // namespace

TEST_CASE("faal through train::Trainer: steps.csv holds each step's weights, history.csv their epoch mean",
          "[fair][faal]") {
    cw_train_test::QuietAttacks quiet;
    for (const std::string name : {"faal", "faal_trades"}) {
        DYNAMIC_SECTION(name) {
            cw_nn_test::ScratchDir dir;
            REQUIRE(run_trainer(name, dir.path.string()).result.steps == 12);
            const std::string history = cw_train_test::file_text(dir.path / "history.csv");
            std::stringstream steps(cw_train_test::file_text(dir.path / "steps.csv"));
            std::string line;
            std::getline(steps, line);
            const auto header = split(line);
            REQUIRE(header.size() >= 3);
            REQUIRE(header[header.size() - 3] == "weight");
            REQUIRE(header[header.size() - 2] == "margin");
            REQUIRE(header[header.size() - 1] == "mean_weight");
            // Per epoch and class: the sum of the per-step weights; per step: Σ_k K·p_k = K.
            std::vector<std::vector<double>> sum(2, std::vector<double>(3, 0.0));
            std::map<int, double> step_total;
            std::vector<int> steps_seen(2, 0);
            double spread = 0;
            while (std::getline(steps, line)) {
                const auto cells = split(line);
                if (cells[4] == "all") continue;
                const int epoch = std::stoi(cells[1]) - 1, k = std::stoi(cells[4]);
                const double w = std::stod(cells[cells.size() - 3]);
                sum[epoch][k] += w;
                step_total[std::stoi(cells[0])] += w;
                if (k == 0) ++steps_seen[epoch];
                spread = std::max(spread, std::abs(w - 1));
            }
            REQUIRE(steps_seen == std::vector<int>{6, 6});
            for (const auto& [step, total] : step_total) CHECK(total == Approx(3.0).epsilon(1e-7));
            CHECK(spread > 0.05);   // the weights left the uniform
            for (int e = 0; e < 2; ++e) {
                const auto mean = history_row(history, e + 1, "state_mean_weight", 3);
                for (int k = 0; k < 3; ++k) CHECK(mean[k] == Approx(sum[e][k] / 6).epsilon(1e-5));
            }
            CHECK(history.find("2,state_weight,") != std::string::npos);
            CHECK(history.find("2,state_margin,") != std::string::npos);
        }
    }
}

TEST_CASE("faal: a run interrupted mid-epoch and resumed ends bit-identical, epoch means included", "[fair][faal]") {
    cw_train_test::QuietAttacks quiet;
    for (const std::string name : {"faal", "faal_trades"}) {
        DYNAMIC_SECTION(name) {
            cw_nn_test::ScratchDir straight_dir, cut_dir;
            cw_train_test::BandRun straight = run_trainer(name, straight_dir.path.string());
            REQUIRE(straight.result.steps == 12);
            // Step 9: epoch 2, batch 3 — the epoch's mean weight already holds three batches.
            REQUIRE(run_trainer(name, cut_dir.path.string(), 9).result.interrupted);
            cw_train_test::BandRun rest = run_trainer(name, cut_dir.path.string(), -1, true);
            REQUIRE(rest.result.steps == 12);
            CHECK(rest.method->class_state() == straight.method->class_state());
            CHECK(parameter_values(*rest.model) == parameter_values(*straight.model));
            CHECK(cw_train_test::file_text(cut_dir.path / "steps.csv") ==
                  cw_train_test::file_text(straight_dir.path / "steps.csv"));
        }
    }
}
