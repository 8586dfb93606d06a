#include "protocols/checkpoint_eval.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "attacks/registry.h"
#include "cli/common_flags.h"
#include "datasets/batch.h"
#include "datasets/registry.h"
#include "datasets/splits.h"
#include "engine/device.h"
#include "eval/evaluator.h"
#include "nn/checkpoint.h"
#include "jobs/job.h"
#include "train/stop_signal.h"

namespace cw::protocols {

CheckpointEval checkpoint_eval_like(const train::JobConfig& job, const std::string& weights, const std::string& out_dir) {
    CheckpointEval c;
    c.weights = weights;
    c.classes = job.data.classes;
    c.data_dir = job.common.data_dir;
    c.n = job.data.eval_n;
    c.batch_size = job.data.eval_batch_size;
    c.device = job.common.device;
    c.seed = job.common.seed;
    c.out_dir = out_dir;
    c.resume = job.common.resume;
    c.experiment = job.experiment;
    c.command_line = job.common.command_line;
    c.should_stop = [] { return train::stop_requested() != 0; };
    return c;
}

nlohmann::json evaluate_checkpoint(const CheckpointEval& c, std::ostream& log) {
    const nn::Metadata md = nn::read_metadata(c.weights);
    if (!md.count("arch"))
        throw std::invalid_argument(c.weights + ": no architecture metadata (checkpoints written by train, audit's "
                                                "runs and the experiments carry it)");
    const std::string dataset = !c.dataset.empty() ? c.dataset : md.count("dataset") ? md.at("dataset") : "";
    if (dataset.empty())
        throw std::invalid_argument(c.weights + ": no dataset metadata; name the dataset with --dataset");
    // Attacks before the data: a misspelt attack should fail before the loading.
    attacks::AttackOptions ao;
    ao.eps = c.eps;
    ao.alpha = c.alpha;
    std::vector<std::unique_ptr<attacks::Attack>> owned;
    std::vector<attacks::Attack*> list;
    for (const std::string& name : c.attacks) {
        if (name == "clean") continue;
        owned.push_back(attacks::make_attack(name, ao));
        owned.back()->set_log(&log);
        list.push_back(owned.back().get());
    }

    const data::DatasetInfo& info = data::dataset_info(dataset);
    auto test = std::make_shared<data::Dataset>(data::load_dataset(dataset, info.test_split, c.data_dir));
    train::keep_job_classes("--classes", c.classes, dataset, c.data_dir, *test);
    nn::LoadedModel loaded = nn::load_model_from_checkpoint(c.weights);
    const nn::ModelConfig& cfg = loaded.spec.config;
    if (cfg.num_classes != test->num_classes())
        throw std::invalid_argument(c.weights + ": the model has " + std::to_string(cfg.num_classes) + " classes, " +
                                    dataset + (c.classes == "all" ? "" : " (" + c.classes + ")") + " has " +
                                    std::to_string(test->num_classes()) +
                                    (c.classes == "all" ? " (a model trained on top:K classes needs --classes top:K)" : ""));
    const std::string mismatch = nn::input_geometry_mismatch("the " + loaded.spec.arch + " model of " + c.weights, cfg,
                                                             "the images of " + dataset, test->channels, test->height,
                                                             test->width);
    if (!mismatch.empty()) throw std::invalid_argument(mismatch);
    const Device device = resolve_device(c.device, false);
    loaded.model->to(device);
    loaded.model->eval();

    const int64_t n = c.n > 0 ? std::min(c.n, test->size()) : test->size();
    const int64_t bs = c.batch_size;
    std::vector<int64_t> first_n(static_cast<size_t>(n));   // the first n images, as a job evaluates them
    std::iota(first_n.begin(), first_n.end(), 0);
    const eval::BatchSource source = train::batches_of(test, first_n, bs, device);

    eval::EvalOptions eo;
    eo.info.experiment = c.experiment;
    eo.info.dataset = dataset;
    eo.info.split = info.test_split;
    eo.info.arch = loaded.spec.arch;
    eo.info.checkpoint = c.weights;
    eo.info.method = md.count("method") ? md.at("method") : "unknown";
    eo.info.device = device.str();
    eo.info.seed = c.seed;
    eo.info.command_line = c.command_line;
    eo.info.classes = test->class_names;
    eo.info.coarse_of = data::coarse_of_fine(*test);
    if (!eo.info.coarse_of.empty()) eo.info.coarse_classes = test->coarse_class_names;
    eo.out_dir = c.out_dir;
    eo.resume = c.resume;
    eo.should_stop = c.should_stop;
    eo.log = &log;
    eo.run_key = {{"checkpoint", c.weights}, {"classes", c.classes}, {"n", n}, {"batch_size", bs}, {"eps", c.eps}};
    log << "evaluating " << c.weights << " (" << loaded.spec.arch << ") on the first " << n << " " << dataset
        << " test images, eps " << c.eps * 255 << "/255\n";
    return eval::evaluate(*loaded.model, source, list, eo).results;
}

}  // namespace cw::protocols
