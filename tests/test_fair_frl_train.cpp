// FRL and WAT as they train: the weighted TRADES terms, the loss going down on blobs, and a toy run through
// train::Trainer with a validation split (the per-class state rows in history.csv and steps.csv).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "datasets/loader.h"
#include "engine/ops.h"
#include "fairness/methods/frl.h"
#include "fairness/methods/wat.h"
#include "fairness/methods/weighted_trades.h"
#include "nn/layers.h"
#include "nn/optim.h"
#include "tests/test_nn_util.h"
#include "tests/test_train_methods_util.h"
#include "jobs/registry.h"
#include "train/trainer.h"

using namespace cw;
using namespace cw::train;

TEST_CASE("weighted TRADES: per-sample terms are ce_coef*CE + kl_coef*KL and sum to the batch loss", "[fair]") {
    Rng init(3), data(4);
    auto net = cw_train_test::tiny_net(init);
    std::vector<float> xv;
    std::vector<int32_t> yv;
    cw_train_test::blobs(4, data, xv, yv);
    const Tensor x = Tensor::from_vector(xv, {4, 3, 8, 8}), y = Tensor::from_labels(yv);
    std::vector<float> shifted(xv);
    for (float& v : shifted) v = 1.f - v;   // far from x: KL is large and visibly asymmetric
    const Tensor x_adv = Tensor::from_vector(shifted, {4, 3, 8, 8});
    const TradesCoefficients coef{{0.1f, 0.2f, 0.3f, 0.4f}, {1.5f, 0.f, 0.75f, 0.25f}};
    TradesTerms terms;
    const BatchLoss out = weighted_trades_loss(*net, x, x_adv, y, coef, &terms);
    // The reference: the same two train-mode forwards, the terms taken one by one.
    net->train();
    const Tensor nat = (*net)(x), adv = (*net)(x_adv);
    const std::vector<float> ce = cross_entropy(nat, y, {0.f, Tensor(), Reduction::None}).to_vector();
    const std::vector<float> kl = kl_div(nat, adv, Reduction::None).to_vector();
    const std::vector<float> got = out.per_sample.to_vector();
    double total = 0;
    for (int i = 0; i < 4; ++i) {
        REQUIRE(kl[i] > 0);
        CHECK(got[i] == Approx(coef.ce[i] * ce[i] + coef.kl[i] * kl[i]).epsilon(1e-5));
        CHECK(terms.ce[i] == Approx(ce[i]).epsilon(1e-6));
        CHECK(terms.kl[i] == Approx(kl[i]).epsilon(1e-5));   // KL(p(x) ‖ p(x')), not the reverse
        total += coef.ce[i] * ce[i] + coef.kl[i] * kl[i];
    }
    CHECK(sum(out.per_sample).item() == Approx(total).epsilon(1e-5));
    REQUIRE_THROWS_WITH(weighted_trades_loss(*net, x, x_adv, y, {{0.1f}, {0.1f}}),
                        Catch::Contains("1 CE and 1 KL coefficients for a batch of 4"));
}

TEST_CASE("frl / wat: a few epochs on separable blobs lower the loss, with unequal class weights", "[fair]") {
    cw_train_test::QuietAttacks quiet;
    Rng data(9);
    std::vector<float> xv;
    std::vector<int32_t> yv;
    cw_train_test::blobs(48, data, xv, yv);
    for (const std::string name : {"frl_rw", "frl_rm", "frl_rwrm", "frl_baseline_rw", "wat"}) {
        DYNAMIC_SECTION(name) {
            MethodOptions o;
            o.eps = 8.f / 255;
            o.steps = 3;
            MethodPtr method = make_method(name, o);
            // Unequal weights and radii, as after an epoch-start update where class 2 violated.
            if (auto* frl = dynamic_cast<Frl*>(method.get())) frl->update(0, {0.9, 0.9, 0.5}, {0.6, 0.6, 0.1}, 0.77, 0.43);
            if (auto* wat = dynamic_cast<Wat*>(method.get())) wat->update({0.5, 1.0, 4.0}, 1.8);
            Rng init(10);
            auto net = cw_train_test::tiny_net(init);
            const std::vector<double> epoch_loss = cw_train_test::train_on_blobs(*method, *net, xv, yv,
                [](const BatchLoss& out, const Tensor&, const std::vector<int32_t>&) {
                    REQUIRE(out.per_sample.shape() == Shape{16});
                    REQUIRE(out.logits.shape() == Shape{16, 3});
                }, false);
            INFO(name << ": mean loss per epoch " << epoch_loss.front() << " ... " << epoch_loss.back());
            REQUIRE(epoch_loss.back() < 0.7 * epoch_loss.front());
        }
    }
}

namespace {

TrainResult band_run(Method& method, const std::string& out, bool with_val) {
    manual_seed(5);
    auto data = cw_train_test::band_dataset(48, 11), held = cw_train_test::band_dataset(30, 12);
    Rng loader_rng(6);
    data::LoaderOptions lo;
    lo.batch_size = 16;
    data::Loader loader(data, lo, loader_rng);
    TrainerConfig config;
    config.epochs = 2;
    config.recipe.lr = 0.05;
    config.eval_eps = 0.1f;
    config.eval_alpha = 0.04f;
    config.eval_steps = 2;
    config.out_dir = out;
    config.seed = 5;
    config.audit_steps = 2;   // steps.csv: the per-step rows with the method's class state
    TrainSetup s;
    s.model = cw_train_test::band_model();
    s.new_model = [] { return cw_train_test::band_model(); };
    s.method = &method;
    s.loader = &loader;
    std::vector<int64_t> idx(30);
    std::iota(idx.begin(), idx.end(), 0);
    const data::Batch b = data::make_batch(*held, idx);
    const std::vector<eval::EvalBatch> batches{{b.images, b.labels, b.indices}};
    s.evals = {{"test", eval::batches_from(batches)}};
    if (with_val) s.evals.insert(s.evals.begin(), {"val", eval::batches_from(batches)});
    s.class_names = data->class_names;
    s.model_metadata = {{"arch", "toy"}};
    return Trainer(s, config).run();
}

}  // namespace

TEST_CASE("frl / wat through the trainer: the validation split drives the state rows; no split is a clear error", "[fair]") {
    cw_train_test::QuietAttacks quiet;
    MethodOptions o;
    o.eps = 0.1f;
    o.steps = 2;
    o.frl.val_steps = 2;
    o.frl.tau1 = o.frl.tau2 = 0;   // on this toy split some class is always above the overall error
    {
        cw_nn_test::ScratchDir dir;
        MethodPtr frl = make_method("frl_rwrm", o);
        REQUIRE(band_run(*frl, dir.path.string(), true).epochs_completed == 2);
        const std::string history = cw_train_test::file_text(dir.path / "history.csv");
        for (const char* row : {"state_lambda_nat", "state_lambda_bdy", "state_lambda_m", "state_w_nat", "state_w_bdy",
                                "state_eps_mult", "state_violation_nat", "state_violation_bdy"}) {
            INFO(row);
            CHECK(history.find(std::string("2,") + row + ",") != std::string::npos);
        }
        const auto state = frl->class_state();
        double lambda_sum = 0, violation_spread = 0;
        for (int k = 0; k < 3; ++k) lambda_sum += state[0][k] + state[1][k];
        for (int k = 0; k < 3; ++k) violation_spread += std::abs(state[6][k]);
        CHECK(violation_spread > 0);   // the epoch-start evaluation ran and measured something
        CHECK(lambda_sum > 0);         // with τ = 0 some class violates, so some multiplier moved
        CHECK(cw_train_test::file_text(dir.path / "steps.csv").find("lambda_nat") != std::string::npos);
    }
    {
        cw_nn_test::ScratchDir dir;
        MethodPtr wat = make_method("wat", o);
        REQUIRE(band_run(*wat, dir.path.string(), true).epochs_completed == 2);
        const std::string history = cw_train_test::file_text(dir.path / "history.csv");
        CHECK(history.find("2,state_weight,") != std::string::npos);
        CHECK(history.find("2,state_cum_cost,") != std::string::npos);
        const auto state = wat->class_state();
        double w_sum = state[2][0];
        for (int k = 0; k < 3; ++k) {
            CHECK(state[1][k] > 0);   // two epochs of positive validation costs accumulated
            w_sum += state[0][k];
        }
        CHECK(w_sum == Approx(3.0).epsilon(1e-9));   // Σ w = C after a Hedge update
    }
    for (const char* name : {"frl_rw", "frl_baseline_rw", "wat"}) {
        cw_nn_test::ScratchDir dir;
        MethodPtr m = make_method(name, o);
        INFO(name);
        CHECK_THROWS_WITH(band_run(*m, dir.path.string(), false), Catch::Contains("needs a validation split (--val-split"));
    }
}
