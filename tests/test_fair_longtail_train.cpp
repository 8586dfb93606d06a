// The long-tail remedies training: each lowers its loss on separable blobs with per-sample terms that sum to its
// own loss, and a toy run through train::Trainer writes the methods' class state (state_weight rows).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>

#include "datasets/loader.h"
#include "engine/ops.h"
#include "fairness/methods/longtail_at.h"
#include "fairness/methods/longtail_losses.h"
#include "fairness/methods/longtail_weights.h"
#include "nn/optim.h"
#include "tests/test_nn_util.h"
#include "tests/test_train_methods_util.h"
#include "jobs/registry.h"
#include "train/trainer.h"

using namespace cw;
using namespace cw::train;

namespace {

// The loss the method should have returned, rebuilt from its reported logits and its current class state.
double expected_loss(const std::string& name, const LongTailAt& m, const Tensor& logits, const Tensor& y,
                     const std::vector<int32_t>& hy, float cos_lambda) {
    if (name == "at_cost_sensitive" || name == "at_class_balanced")
        return sum(weighted_ce_terms(logits, y, hy, m.weights())).item();
    if (name == "at_ldam_drw") return sum(weighted_ce_terms(ldam_logits(logits, hy, m.margins(), 1.f), y, hy, m.weights())).item();
    const double ce = cross_entropy(logits, y).item();
    if (name == "at_cosine_reg") return ce + cos_lambda * cosine_regulariser(logits, hy, 3).item();
    return ce;
}

}  // namespace

TEST_CASE("longtail methods: a few epochs on blobs lower the loss; per-sample terms sum to the method's loss", "[fair]") {
    cw_train_test::QuietAttacks quiet;
    Rng data(9);
    std::vector<float> xv;
    std::vector<int32_t> yv;
    cw_train_test::blobs(48, data, xv, yv);
    for (const std::string name : {"at_cost_sensitive", "at_class_balanced", "at_ldam_drw", "at_cosine_reg", "at_target_class"}) {
        DYNAMIC_SECTION(name) {
            MethodOptions o;
            o.eps = 8.f / 255;
            o.steps = 3;
            o.longtail.drw_epoch = 3;
            o.longtail.critical_class = 0;
            MethodPtr method = make_method(name, o);
            auto& lt = dynamic_cast<LongTailAt&>(*method);
            Rng init(10);
            auto net = cw_train_test::tiny_net(init);
            nn::SgdOptions so;
            so.lr = 0.05f;
            nn::SGD opt(net->parameters(), so);
            Rng rng(11);
            std::vector<double> epoch_loss;
            for (int64_t e = 0; e < 6; ++e) {
                method->start_epoch({e, *net});
                ClassStats stats(3);
                double total = 0;
                for (int64_t b = 0; b < 3; ++b) {
                    const std::vector<float> bx(xv.begin() + b * 16 * 192, xv.begin() + (b + 1) * 16 * 192);
                    const std::vector<int32_t> by(yv.begin() + b * 16, yv.begin() + (b + 1) * 16);
                    const Tensor x = Tensor::from_vector(bx, {16, 3, 8, 8}), y = Tensor::from_labels(by);
                    const std::vector<double> w = lt.weights();
                    const BatchLoss out = cw_train_test::sgd_step(*method, *net, opt, x, y, by, e, b, 3, rng);
                    REQUIRE(out.per_sample.shape() == Shape{16});
                    REQUIRE(out.logits.shape() == Shape{16, 3});
                    if (!w.empty()) REQUIRE(lt.weights() == w);   // weights change only between epochs
                    const double loss = sum(out.per_sample).item();
                    REQUIRE(loss == Approx(expected_loss(name, lt, out.logits, y, by, o.longtail.cos_lambda)).epsilon(1e-5));
                    total += loss;
                    stats.add(by, argmax(out.logits, 1).to_int_vector(), out.per_sample.to_vector());
                }
                method->end_epoch({e, stats, *net});
                epoch_loss.push_back(total / 3);
            }
            if (name == std::string("at_target_class")) {
                // the last epoch's fraction of attacks aimed at c* = 0: none for class 0, about p_t = 0.5 otherwise
                const auto frac = method->class_state()[0];
                REQUIRE(frac[0] == 0.0);
                for (size_t k = 1; k < 3; ++k) REQUIRE((frac[k] > 0.2 && frac[k] < 0.8));
            }
            if (name == std::string("at_cosine_reg")) {
                const auto penalty = method->class_state()[0];
                for (double v : penalty) REQUIRE((v >= 0 && v <= 1));
                std::map<std::string, Tensor> tensors;   // the epoch's tallies survive a resume
                nn::Metadata meta;
                method->save_state(tensors, meta);
                MethodPtr back = make_method(name, o);
                back->load_state(tensors, meta);
                REQUIRE(back->class_state() == method->class_state());
            }
            INFO(name << ": mean loss per epoch " << epoch_loss.front() << " ... " << epoch_loss.back());
            REQUIRE(epoch_loss.back() < 0.7 * epoch_loss.front());
        }
    }
}

namespace {

// history.csv rows "epoch,state_<name>,overall,top,middle,bottom" as {epoch → per-class values}.
std::map<int, std::vector<double>> state_rows(const std::filesystem::path& history, const std::string& name) {
    std::ifstream in(history);
    std::map<int, std::vector<double>> rows;
    for (std::string line; std::getline(in, line);) {
        std::stringstream s(line);
        std::string epoch, eval, cell;
        std::getline(s, epoch, ',');
        std::getline(s, eval, ',');
        if (eval != "state_" + name) continue;
        std::getline(s, cell, ',');   // overall: empty / nan for state rows
        std::vector<double> v;
        while (std::getline(s, cell, ',')) v.push_back(std::stod(cell));
        rows[std::stoi(epoch)] = v;
    }
    return rows;
}

}  // namespace

TEST_CASE("longtail methods: a toy Trainer run writes state_weight rows that follow the previous epoch", "[fair]") {
    cw_train_test::QuietAttacks quiet;
    cw_nn_test::ScratchDir dir;
    manual_seed(5);
    auto data = cw_train_test::band_dataset(96, 11), test = cw_train_test::band_dataset(30, 12);
    MethodOptions o;
    o.eps = 0.15f;
    o.steps = 3;
    o.longtail.drw_epoch = 2;
    MethodPtr method = make_method("at_ldam_drw", o);
    Rng loader_rng(6);
    data::LoaderOptions lo;
    lo.batch_size = 16;
    data::Loader loader(data, lo, loader_rng);
    TrainerConfig config;
    config.epochs = 3;
    config.recipe.lr = 0.05;
    config.eval_eps = 0.15f;
    config.eval_alpha = 0.06f;
    config.eval_steps = 2;
    config.audit_steps = 0;
    config.out_dir = dir.path.string();
    config.seed = 5;
    TrainSetup s;
    s.model = cw_train_test::band_model();
    s.new_model = [] { return cw_train_test::band_model(); };
    s.method = method.get();
    s.loader = &loader;
    std::vector<eval::EvalBatch> batches;
    std::vector<int64_t> idx(30);
    std::iota(idx.begin(), idx.end(), 0);
    data::Batch b = data::make_batch(*test, idx);
    batches.push_back({b.images, b.labels, b.indices});
    s.evals = {{"test", eval::batches_from(batches)}};
    s.class_names = data->class_names;
    s.model_metadata = {{"arch", "toy"}};
    REQUIRE(Trainer(s, config).run().epochs_completed == 3);

    const auto weight = state_rows(dir.path / "history.csv", "weight");
    const auto margin = state_rows(dir.path / "history.csv", "margin");
    const auto n_eff = state_rows(dir.path / "history.csv", "n_eff");
    REQUIRE(weight.size() == 3);
    REQUIRE(margin.size() == 3);
    REQUIRE(n_eff.size() == 3);
    // epochs 1, 2 (0-based 0, 1) train before the DRW epoch: uniform; epoch 3 uses CB weights of epoch 2's counts
    CHECK(weight.at(1) == std::vector<double>{1, 1, 1});
    CHECK(weight.at(2) == std::vector<double>{1, 1, 1});
    std::vector<int64_t> counts;
    for (double v : n_eff.at(2)) counts.push_back(static_cast<int64_t>(v));
    const auto cb = class_balanced_weights(counts, 0.9999);
    for (size_t k = 0; k < 3; ++k) CHECK(weight.at(3)[k] == Approx(cb[k]).epsilon(1e-4));
    const auto want_margin = ldam_margins(counts, 0.5);
    for (size_t k = 0; k < 3; ++k) CHECK(margin.at(3)[k] == Approx(want_margin[k]).epsilon(1e-4));
    CHECK(*std::max_element(margin.at(3).begin(), margin.at(3).end()) == Approx(0.5));
}
