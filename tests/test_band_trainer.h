#pragma once
// The toy Trainer run the fair methods' trainer tests share: the band data (96 training images in batches of 16,
// 30 test images evaluated after every epoch), band_model, ε 0.15 with 3 attack steps, seed 5. Each test sets what
// it varies (the method's options, epochs, schedule, audit, interruption) in `adjust`.
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "datasets/loader.h"
#include "jobs/registry.h"
#include "tests/test_train_methods_util.h"
#include "train/trainer.h"

namespace cw_train_test {

struct BandRun {
    cw::train::MethodPtr method;
    std::shared_ptr<cw::nn::Module> model;
    cw::train::TrainResult result;
};

inline BandRun run_band_trainer(const std::string& method_name, const std::string& out,
                                const std::function<void(cw::train::MethodOptions&, cw::train::TrainerConfig&)>& adjust,
                                const std::function<std::shared_ptr<cw::nn::Module>()>& make_model = band_model) {
    using namespace cw;
    BandRun r;
    manual_seed(5);
    auto data = band_dataset(96, 11), test = band_dataset(30, 12);
    train::MethodOptions o;
    o.eps = 0.15f;
    o.steps = 3;
    train::TrainerConfig config;
    config.epochs = 3;
    config.recipe.lr = 0.05;
    config.eval_eps = 0.15f;
    config.eval_alpha = 0.06f;
    config.eval_steps = 2;
    config.out_dir = out;
    config.seed = 5;
    adjust(o, config);
    r.method = train::make_method(method_name, o);
    r.model = make_model();
    Rng loader_rng(6);
    data::LoaderOptions lo;
    lo.batch_size = 16;
    data::Loader loader(data, lo, loader_rng);
    train::TrainSetup s;
    s.model = r.model;
    s.method = r.method.get();
    s.loader = &loader;
    std::vector<int64_t> idx(30);
    std::iota(idx.begin(), idx.end(), 0);
    data::Batch b = data::make_batch(*test, idx);
    s.evals = {{"test", eval::batches_from({{b.images, b.labels, b.indices}})}};
    s.class_names = data->class_names;
    s.model_metadata = {{"arch", "toy"}};
    r.result = train::Trainer(s, config).run();
    return r;
}

// Every parameter's values, in the module's order: two runs trained the same have equal lists.
inline std::vector<std::vector<float>> parameter_values(cw::nn::Module& m) {
    std::vector<std::vector<float>> v;
    for (auto* p : m.parameters()) v.push_back(p->to_vector());
    return v;
}

}  // namespace cw_train_test
