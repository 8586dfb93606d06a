#include "jobs/final_evaluation.h"

#include <filesystem>
#include <map>

#include "eval/corruption_eval.h"
#include "eval/evaluator.h"
#include "jobs/job.h"
#include "nn/checkpoint.h"
#include "train/stop_signal.h"

namespace cw::train {

namespace {

namespace fs = std::filesystem;

bool is_averaged(const std::string& checkpoint) { return checkpoint.rfind("ema_", 0) == 0; }

// What a run must have done to write `checkpoint`, for the line that says it was skipped.
std::string needs(const std::string& checkpoint) {
    return is_averaged(checkpoint) ? "--ema and an epoch at or after --ema-start; with --ema fawa, one whose worst "
                                     "validation class reached --fawa-threshold"
                                   : "a per-epoch evaluation";
}

// `to` gets the evaluation files of `from` (same weights under another name), corruptions included if any.
void copy_evaluation(const fs::path& from, const fs::path& to, bool with_corruptions) {
    fs::create_directories(to);
    if (with_corruptions) fs::create_directories(to.string() + "_corruptions");
    for (const char* f : {"results.json", "records.csv"}) {
        fs::copy_file(from / f, to / f, fs::copy_options::overwrite_existing);
        if (with_corruptions)
            fs::copy_file(from.string() + "_corruptions/" + f, to.string() + "_corruptions/" + f,
                          fs::copy_options::overwrite_existing);
    }
}

eval::EvalOptions evaluation_options(const JobConfig& job, const JobImages& images, const std::string& checkpoint_file,
                                     const std::string& out_dir, Device device, std::ostream& out) {
    eval::EvalOptions eo;
    eo.info.experiment = job.experiment;
    eo.info.dataset = job.data.dataset;
    eo.info.split = "test";
    eo.info.arch = job.arch.empty() ? default_arch(job.data.dataset) : job.arch;
    eo.info.checkpoint = checkpoint_file;
    eo.info.method = job.method;
    eo.info.device = device.str();
    eo.info.seed = job.common.seed;
    eo.info.command_line = job.common.command_line;
    eo.info.classes = images.test->class_names;
    eo.info.coarse_of = images.coarse_of;
    if (!images.coarse_of.empty()) eo.info.coarse_classes = images.test->coarse_class_names;
    eo.out_dir = out_dir;
    eo.should_stop = [] { return stop_requested() != 0; };
    eo.resume = job.common.resume;
    eo.log = &out;
    eo.run_key = {{"checkpoint", checkpoint_file}, {"n", images.test_idx.size()}, {"batch_size", job.data.eval_batch_size}};
    return eo;
}

// The common corruptions of one checkpoint, after its clean and attacked evaluation `eo`: into <eval dir>_corruptions.
void evaluate_checkpoint_corruptions(nn::Module& model, const JobConfig& job, const FinalEvaluationPlan& plan,
                                     const JobImages& images, const eval::EvalOptions& eo, std::ostream& out) {
    eval::CorruptionEvalOptions co = eval::corruption_options_like(eo, eo.out_dir + "_corruptions");
    co.corruptions = plan.corruptions;
    co.severities = plan.severities;
    co.data_dir = job.common.data_dir;
    co.batch_size = job.data.eval_batch_size;
    eval::evaluate_corruptions(model, *images.test, images.test_idx, co);
    out << "wrote " << co.out_dir << "/results.json\n";
}

}  // namespace

void evaluate_final_checkpoints(const JobConfig& job, const FinalEvaluationPlan& plan, const JobImages& images,
                                const std::function<std::shared_ptr<nn::Module>()>& new_model, Device device,
                                std::ostream& out) {
    const fs::path run_dir = job.common.out;
    std::map<std::string, std::string> evaluated;   // "<ema?>:<epoch>" → the checkpoint evaluated for it
    for (const auto& which : plan.checkpoints) {
        const std::string file = (run_dir / (which + ".safetensors")).string();
        if (!fs::exists(file)) {
            out << "final evaluation: no " << file << " (" << which << " needs " << needs(which) << "); skipped\n";
            continue;
        }
        const std::string epoch = nn::read_metadata(file).at("epoch");
        // best_robust from the last epoch is last.safetensors again: evaluate the weights once.
        const std::string key = (is_averaged(which) ? "ema:" : ":") + epoch;
        if (evaluated.count(key)) {
            const fs::path from = run_dir / ("eval_" + evaluated[key]);
            const fs::path to = run_dir / ("eval_" + which);
            copy_evaluation(from, to, !plan.corruptions.empty());
            out << "final evaluation: " << which << " is the epoch of " << evaluated[key] << " (same weights): copied "
                << from.string() << " to " << to.string() << "\n";
            continue;
        }
        evaluated[key] = which;
        auto model = new_model();
        nn::load_model(*model, file);
        model->to(device);
        model->eval();
        const eval::EvalOptions eo =
            evaluation_options(job, images, file, (run_dir / ("eval_" + which)).string(), device, out);
        out << "final evaluation of " << which << " (" << file << ", epoch " << epoch << ") on "
            << images.test_idx.size() << " test images:" << std::endl;   // flushed: tests signal at this line
        eval::evaluate(*model, batches_of(images.test, images.test_idx, job.data.eval_batch_size, device),
                       plan.attacks->list, eo);
        out << "wrote " << eo.out_dir << "/results.json\n";
        if (plan.corruptions.empty()) continue;
        out << "common corruptions of " << which << ":\n";
        evaluate_checkpoint_corruptions(*model, job, plan, images, eo, out);
    }
}

}  // namespace cw::train
